// The cases service as an app: no listening here (server.ts does that), so tests
// build it with their own store and neighbours.
import type { FastifyInstance } from 'fastify';
import { createServiceApp, type ServiceAppOptions } from '@lpm/shared/http/service-app';
import { CASE_DOCS } from './contract/case-operations.ts';
import type { TeamSyncs } from '@lpm/shared/jobs/team-syncs';
import type { Cases } from './domain/cases.ts';
import { caseRoutes } from './routes/cases.ts';
import { internalRoutes } from './routes/internal.ts';

export interface CasesAppOptions extends Omit<ServiceAppOptions, 'name' | 'docs'> {
  cases: Cases;
  /** The team syncs the gateway asks for (Cases.syncWork). */
  syncs: TeamSyncs;
}

export function buildCasesApp(opts: CasesAppOptions): FastifyInstance {
  const app = createServiceApp({ ...opts, name: 'cases', docs: CASE_DOCS });
  app.register(async (scope) => {
    caseRoutes(scope, opts.cases);
    internalRoutes(scope, opts.cases, opts.syncs);
  });
  return app;
}
