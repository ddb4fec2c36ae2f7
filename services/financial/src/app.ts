// The financial service as an app: no listening here (server.ts does that), so
// tests build it with their own store and neighbours.
import type { FastifyInstance } from 'fastify';
import { createServiceApp, type ServiceAppOptions } from '@lpm/shared/http/service-app';
import { FINANCIAL_DOCS } from './contract/financial-operations.ts';
import type { TeamSyncs } from '@lpm/shared/jobs/team-syncs';
import type { Financial } from './domain/financial.ts';
import { internalRoutes } from './routes/internal.ts';
import { financialRoutes } from './routes/financial.ts';

export interface FinancialAppOptions extends Omit<ServiceAppOptions, 'name' | 'docs'> {
  financial: Financial;
  /** The team syncs the gateway asks for (Financial.syncWork). */
  syncs: TeamSyncs;
}

export function buildFinancialApp(opts: FinancialAppOptions): FastifyInstance {
  const app = createServiceApp({ ...opts, name: 'financial', docs: FINANCIAL_DOCS });
  app.register(async (scope) => {
    financialRoutes(scope, opts.financial);
    internalRoutes(scope, opts.financial, opts.syncs);
  });
  return app;
}
