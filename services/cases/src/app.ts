import type { FastifyInstance } from 'fastify';
import { buildServiceApp, type DomainAppOptions } from '@lpm/shared/service/domain-app';
import type { TeamSyncs } from '@lpm/shared/jobs/team-syncs';
import { CASE_DOCS } from './contract/case-operations.ts';
import type { Cases } from './domain/cases.ts';
import { caseRoutes } from './routes/cases.ts';
import { internalRoutes } from './routes/internal.ts';

export interface CasesAppOptions extends DomainAppOptions {
  cases: Cases;
  /** The team syncs the gateway asks for (Cases.syncWork). */
  syncs: TeamSyncs;
}

export function buildCasesApp(opts: CasesAppOptions): FastifyInstance {
  return buildServiceApp('cases', CASE_DOCS, opts, [caseRoutes, internalRoutes]);
}
