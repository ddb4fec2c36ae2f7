// The deals app in process on its own database, with its neighbours faked: no
// clients (any client_id is 404) and no users unless given, and no cases service
// unless given.
import { ClientViewEntity } from '@lpm/shared/views/client-view-entity';
import { clientAndUserLinksOn, type ClientAndUserNeighbours } from '@lpm/test-kit/view-links';
import { startServiceUnderTest, type ServiceUnderTest } from '@lpm/test-kit/service-under-test';
import { NO_RELAY, withListsReady } from '@lpm/test-kit/service-parts';
import { buildDealsApp } from '../src/app.ts';
import { DealEntity } from '../src/data/deal-entity.ts';
import { DealsRepository } from '../src/data/deals-repository.ts';
import { Deals, type DealsDeps } from '../src/domain/deals.ts';

export interface DealsUnderTest extends ServiceUnderTest {
  deals: Deals;
  repository: DealsRepository;
}

export interface Neighbours extends ClientAndUserNeighbours {
  cases?: DealsDeps['cases'];
  activities?: DealsDeps['activities'];
}

/** No cases service: a test that reaches it fails. */
const noCases: DealsDeps['cases'] = {
  createForDeal: async () => {
    throw new Error('no cases service in this test');
  },
  archiveForDeal: async () => {
    throw new Error('no cases service in this test');
  },
};

export function startDeals(n: Neighbours = {}): Promise<DealsUnderTest> {
  return startServiceUnderTest({
    name: 'deals',
    entities: [DealEntity, ClientViewEntity],
    build: async ({ db, internalToken, logger }) => {
      const repository = await withListsReady(new DealsRepository(db, n.relay ?? NO_RELAY));
      const deals = new Deals({
        deals: repository,
        ...clientAndUserLinksOn(db, n),
        cases: n.cases ?? noCases,
        activities: n.activities ?? { countsFor: async () => ({ count: 0, open: 1, overdue: 0 }) },
      });
      return { app: buildDealsApp({ deals, db, internalToken, logger }), parts: { deals, repository } };
    },
  });
}
