// The clients service as an app: no listening here (server.ts does that), so tests build it with its real stores.
import type { FastifyInstance } from 'fastify';
import { createServiceApp, type ServiceAppOptions } from '@lpm/shared/http/service-app';
import { Clients, type ClientsDeps } from './domain/clients.ts';
import { clientRoutes } from './routes/clients.ts';
import { internalRoutes } from './routes/internal.ts';

export interface ClientsAppOptions extends ClientsDeps, Omit<ServiceAppOptions, 'name' | 'db'> {}

export function buildClientsApp(opts: ClientsAppOptions): FastifyInstance {
  const app = createServiceApp({ ...opts, name: 'clients', db: opts.orm.em.getConnection().getDb() });
  const clients = new Clients(opts);
  app.register(async (scope) => {
    clientRoutes(scope, clients);
    internalRoutes(scope, clients);
  });
  return app;
}
