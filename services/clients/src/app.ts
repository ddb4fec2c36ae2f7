// The clients service as an app: no listening here (server.ts does that), so tests
// build it with their own store and neighbours.
import type { FastifyInstance } from 'fastify';
import { createServiceApp, type ServiceAppOptions } from '@lpm/shared/http/service-app';
import { CLIENT_DOCS } from './contract/client-operations.ts';
import type { Clients } from './domain/clients.ts';
import { clientRoutes } from './routes/clients.ts';
import { internalRoutes } from './routes/internal.ts';

export interface ClientsAppOptions extends Omit<ServiceAppOptions, 'name' | 'docs'> {
  clients: Clients;
}

export function buildClientsApp(opts: ClientsAppOptions): FastifyInstance {
  const app = createServiceApp({ ...opts, name: 'clients', docs: CLIENT_DOCS });
  app.register(async (scope) => {
    clientRoutes(scope, opts.clients);
    internalRoutes(scope, opts.clients);
  });
  return app;
}
