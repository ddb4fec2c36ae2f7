// The clients service as an app: no listening here (server.ts does that), so tests build it with its real stores.
import type { FastifyInstance } from 'fastify';
import { createHttpApp, type HttpAppOptions } from '@lpm/shared/http';
import { requireGateway } from '@lpm/shared/service-auth';
import { healthRoute } from '@lpm/shared/health';
import { idempotentPosts } from '@lpm/shared/idempotency';
import { Clients, type ClientsDeps } from './domain/clients.ts';
import { clientRoutes } from './routes/clients.ts';
import { internalRoutes } from './routes/internal.ts';

export interface ClientsAppOptions extends ClientsDeps {
  internalToken: string;
  logger?: HttpAppOptions['logger'];
  loggerInstance?: HttpAppOptions['loggerInstance'];
}

export function buildClientsApp(opts: ClientsAppOptions): FastifyInstance {
  const app = createHttpApp({ name: 'clients', logger: opts.logger, loggerInstance: opts.loggerInstance });
  requireGateway(app, opts.internalToken);
  idempotentPosts(app, opts.orm.em.getConnection().getDb());
  healthRoute(app, async () => {
    await opts.orm.em.getConnection().getDb().command({ ping: 1 });
  });
  const clients = new Clients(opts);
  app.register(async (scope) => {
    clientRoutes(scope, clients);
    internalRoutes(scope, clients);
  });
  return app;
}
