// The financial app in process on its own database, with its neighbours faked:
// clients and cases are whatever the test adds to `neighbours` (anything else is 404).
import type { TeamSyncs, TeamSyncsOptions } from '@lpm/shared/jobs/team-syncs';
import type { Relay } from '@lpm/shared/store/record-store-types';
import { CaseViewEntity } from '@lpm/shared/views/case-view-entity';
import { ClientViewEntity } from '@lpm/shared/views/client-view-entity';
import { Neighbours } from '@lpm/test-kit/neighbours';
import { caseLinksOn, clientLinksOn } from '@lpm/test-kit/view-links';
import { startServiceUnderTest, type ServiceUnderTest } from '@lpm/test-kit/service-under-test';
import { NO_RELAY, startTeamSyncs, withListsReady } from '@lpm/test-kit/service-parts';
import { buildFinancialApp } from '../src/app.ts';
import { FinancialEntity } from '../src/data/financial-entity.ts';
import { FinancialRepository } from '../src/data/financial-repository.ts';
import { Financial } from '../src/domain/financial.ts';

export interface FinancialUnderTest extends ServiceUnderTest {
  financial: Financial;
  repository: FinancialRepository;
  neighbours: Neighbours;
  /** The team syncs its internal routes start (run by the test's own pass, every 100 ms). */
  syncs: TeamSyncs;
  /** Moves the service's clock (undefined: the real time). */
  setNow(at: Date | undefined): void;
}

export function startFinancial(
  opts: { relay?: Relay; syncs?: Partial<TeamSyncsOptions> } = {},
): Promise<FinancialUnderTest> {
  return startServiceUnderTest({
    name: 'financial',
    entities: [FinancialEntity, ClientViewEntity, CaseViewEntity],
    build: async ({ db, internalToken, logger }) => {
      const neighbours = new Neighbours();
      let now: Date | undefined;
      const repository = await withListsReady(new FinancialRepository(db, opts.relay ?? NO_RELAY));
      const financial = new Financial({
        records: repository,
        clientLinks: clientLinksOn(db, neighbours.clientLookup),
        caseLinks: caseLinksOn(db, neighbours.caseLookup),
        now: () => now ?? new Date(),
      });
      const syncs = await startTeamSyncs(db, financial.syncWork(), opts.syncs);
      const app = buildFinancialApp({ financial, syncs, db, internalToken, logger });
      const setNow = (at: Date | undefined) => void (now = at);
      return { app, parts: { financial, repository, neighbours, syncs, setNow }, stop: () => syncs.stop() };
    },
  });
}
