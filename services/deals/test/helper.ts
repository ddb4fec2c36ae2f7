// The deals app in process on its own database, with its neighbours faked: no
// clients (any client_id is 404) and no users unless given, and a cases service
// that records the cases asked for.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Db } from 'mongodb';
import { defaultTeamSettings, type Identity } from '@lpm/shared/identity';
import { newId } from '@lpm/shared/ids';
import { openStore } from '@lpm/shared/store/orm';
import type { Relay } from '@lpm/shared/store/record-store-types';
import { callAs } from '@lpm/test-kit/api';
import { assertWholeAnswers, checkWholeAnswers } from '@lpm/test-kit/whole-answers';
import { buildDealsApp } from '../src/app.ts';
import { ClientLinks, type ClientLookup } from '@lpm/shared/views/client-links';
import { CLIENT_VIEWS, ClientViewEntity, type ClientView } from '@lpm/shared/views/client-view-entity';
import { ViewsRepository } from '@lpm/shared/views/views-repository';
import { DealEntity } from '../src/data/deal-entity.ts';
import { DealsRepository } from '../src/data/deals-repository.ts';
import { Deals, type DealsDeps } from '../src/domain/deals.ts';

export const INTERNAL_TOKEN = randomBytes(32).toString('hex');

export function identity(timezone = 'America/Sao_Paulo'): Identity {
  return { teamId: newId('team'), userId: newId('user'), scopes: ['read', 'write', 'admin'], settings: defaultTeamSettings(timezone) };
}

export interface DealsUnderTest {
  app: FastifyInstance;
  deals: Deals;
  repository: DealsRepository;
  db: Db;
  call(who: Identity, opts: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export interface Neighbours {
  clients?: ClientLookup;
  users?: DealsDeps['users'];
  cases?: DealsDeps['cases'];
  activities?: DealsDeps['activities'];
  relay?: Relay;
}

/** A cases service that makes a case id per request and never answers twice for one deal. */
export const noCases: DealsDeps['cases'] = {
  createForDeal: async () => {
    throw new Error('no cases service in this test');
  },
  archiveForDeal: async () => {
    throw new Error('no cases service in this test');
  },
};

export async function startDeals(n: Neighbours = {}): Promise<DealsUnderTest> {
  const store = await openStore({
    url: process.env.MONGO_URL!,
    dbName: `${process.env.MONGO_DB_PREFIX}deals_${randomBytes(4).toString('hex')}`,
    entities: [DealEntity, ClientViewEntity],
  });
  const repository = new DealsRepository(store.db, n.relay ?? { kick: () => {} });
  // As the service's start does: on a new database it only marks the lists ready.
  await repository.lists.backfill();
  const deals = new Deals({
    deals: repository,
    clientLinks: new ClientLinks(n.clients ?? { facts: async () => null }, new ViewsRepository<ClientView>(store.db, CLIENT_VIEWS)),
    users: n.users ?? { find: async () => new Map() },
    cases: n.cases ?? noCases,
    activities: n.activities ?? { countsFor: async () => ({ count: 0, open: 1, overdue: 0 }) },
  });
  const app = buildDealsApp({ deals, db: store.db, internalToken: INTERNAL_TOKEN, logger: process.env.DEBUG_LOG ? { level: 'error' } : false });
  const answers = checkWholeAnswers(app);
  await app.ready();
  return {
    app,
    deals,
    repository,
    db: store.db,
    call: callAs(() => app, INTERNAL_TOKEN),
    close: async () => {
      await app.close();
      await store.db.dropDatabase();
      await store.close();
      assertWholeAnswers(answers);
    },
  };
}
