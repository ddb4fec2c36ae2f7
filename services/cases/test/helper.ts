// The cases app in process on its own database, with its neighbours faked: no
// clients (any client_id is 404), no users, no activities service.
import type { TeamSyncs, TeamSyncsOptions } from '@lpm/shared/jobs/team-syncs';
import { ClientViewEntity } from '@lpm/shared/views/client-view-entity';
import { clientAndUserLinksOn, type ClientAndUserNeighbours } from '@lpm/test-kit/view-links';
import { startServiceUnderTest, type ServiceUnderTest } from '@lpm/test-kit/service-under-test';
import { NO_RELAY, startTeamSyncs, withListsReady } from '@lpm/test-kit/service-parts';
import { buildCasesApp } from '../src/app.ts';
import { CaseEntity } from '../src/data/case-entity.ts';
import { CasesRepository } from '../src/data/cases-repository.ts';
import { Cases, type CasesDeps } from '../src/domain/cases.ts';

export interface CasesUnderTest extends ServiceUnderTest {
  cases: Cases;
  repository: CasesRepository;
  /** The team syncs its internal routes start (run by the test's own pass, every 100 ms). */
  syncs: TeamSyncs;
}

export interface Neighbours extends ClientAndUserNeighbours {
  activities?: CasesDeps['activities'];
  syncs?: Partial<TeamSyncsOptions>;
}

/** The cases app on a database of its own, or on `dbName`, another app's (a second replica). */
export function startCases(n: Neighbours = {}, dbName?: string): Promise<CasesUnderTest> {
  return startServiceUnderTest({
    name: 'cases',
    entities: [CaseEntity, ClientViewEntity],
    dbName,
    build: async ({ db, internalToken, logger }) => {
      const repository = await withListsReady(new CasesRepository(db, n.relay ?? NO_RELAY));
      const cases = new Cases({
        cases: repository,
        ...clientAndUserLinksOn(db, n),
        activities: n.activities ?? { listForCase: async () => ({ items: [], total: 0 }) },
      });
      const syncs = await startTeamSyncs(db, cases.syncWork(), n.syncs);
      const app = buildCasesApp({ cases, syncs, db, internalToken, logger });
      return { app, parts: { cases, repository, syncs }, stop: () => syncs.stop() };
    },
  });
}
