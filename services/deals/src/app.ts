// The deals service as an app: no listening here (server.ts does that), so tests
// build it with their own store and neighbours.
import type { FastifyInstance } from 'fastify';
import { createServiceApp, type ServiceAppOptions } from '@lpm/shared/http/service-app';
import { DEAL_DOCS } from './contract/deal-operations.ts';
import type { Deals } from './domain/deals.ts';
import { dealRoutes } from './routes/deals.ts';
import { internalRoutes } from './routes/internal.ts';

export interface DealsAppOptions extends Omit<ServiceAppOptions, 'name' | 'docs'> {
  deals: Deals;
}

export function buildDealsApp(opts: DealsAppOptions): FastifyInstance {
  const app = createServiceApp({ ...opts, name: 'deals', docs: DEAL_DOCS });
  app.register(async (scope) => {
    dealRoutes(scope, opts.deals);
    internalRoutes(scope, opts.deals);
  });
  return app;
}
