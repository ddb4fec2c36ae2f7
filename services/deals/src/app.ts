import type { FastifyInstance } from 'fastify';
import { buildServiceApp, type DomainAppOptions } from '@lpm/shared/service/domain-app';
import { DEAL_DOCS } from './contract/deal-operations.ts';
import type { Deals } from './domain/deals.ts';
import { dealRoutes } from './routes/deals.ts';
import { internalRoutes } from './routes/internal.ts';

export interface DealsAppOptions extends DomainAppOptions {
  deals: Deals;
}

export function buildDealsApp(opts: DealsAppOptions): FastifyInstance {
  return buildServiceApp('deals', DEAL_DOCS, opts, [dealRoutes, internalRoutes]);
}
