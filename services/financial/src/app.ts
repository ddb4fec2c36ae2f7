import type { FastifyInstance } from 'fastify';
import { buildServiceApp, type DomainAppOptions } from '@lpm/shared/service/domain-app';
import type { TeamSyncs } from '@lpm/shared/jobs/team-syncs';
import { FINANCIAL_DOCS } from './contract/financial-operations.ts';
import type { Financial } from './domain/financial.ts';
import { financialRoutes } from './routes/financial.ts';
import { internalRoutes } from './routes/internal.ts';

export interface FinancialAppOptions extends DomainAppOptions {
  financial: Financial;
  /** The team syncs the gateway asks for (Financial.syncWork). */
  syncs: TeamSyncs;
}

export function buildFinancialApp(opts: FinancialAppOptions): FastifyInstance {
  return buildServiceApp('financial', FINANCIAL_DOCS, opts, [financialRoutes, internalRoutes]);
}
