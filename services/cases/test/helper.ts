// The cases app in process on its own database, with its neighbours faked: no
// clients (any client_id is 404), no users, no activities service.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Db } from 'mongodb';
import { defaultTeamSettings, type Identity } from '@lpm/shared/identity';
import { newId } from '@lpm/shared/ids';
import { TeamSyncs, type TeamSyncsOptions } from '@lpm/shared/jobs/team-syncs';
import { openStore } from '@lpm/shared/store/orm';
import type { Relay } from '@lpm/shared/store/record-store-types';
import { callAs } from '@lpm/test-kit/api';
import { quietLogger } from '@lpm/test-kit/wait';
import { assertWholeAnswers, checkWholeAnswers } from '@lpm/test-kit/whole-answers';
import { buildCasesApp } from '../src/app.ts';
import { CLIENT_VIEWS, ClientViewEntity, type ClientView } from '@lpm/shared/views/client-view-entity';
import { ViewsRepository } from '@lpm/shared/views/views-repository';
import { ClientLinks, type ClientLookup } from '@lpm/shared/views/client-links';
import { CaseEntity } from '../src/data/case-entity.ts';
import { CasesRepository } from '../src/data/cases-repository.ts';
import { Cases, type CasesDeps } from '../src/domain/cases.ts';

export const INTERNAL_TOKEN = randomBytes(32).toString('hex');

export function identity(timezone = 'America/Sao_Paulo'): Identity {
  return { teamId: newId('team'), userId: newId('user'), scopes: ['read', 'write', 'admin'], settings: defaultTeamSettings(timezone) };
}

export interface CasesUnderTest {
  app: FastifyInstance;
  cases: Cases;
  repository: CasesRepository;
  db: Db;
  /** The team syncs its internal routes start (run by the test's own pass, every 100 ms). */
  syncs: TeamSyncs;
  call(who: Identity, opts: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export interface Neighbours {
  clients?: ClientLookup;
  users?: CasesDeps['users'];
  activities?: CasesDeps['activities'];
  relay?: Relay;
  syncs?: Partial<TeamSyncsOptions>;
}

/** The cases app on a database of its own, or on `dbName`, another app's (a second replica). */
export async function startCases(n: Neighbours = {}, dbName = `${process.env.MONGO_DB_PREFIX}cases_${randomBytes(4).toString('hex')}`): Promise<CasesUnderTest> {
  const store = await openStore({
    url: process.env.MONGO_URL!,
    dbName,
    entities: [CaseEntity, ClientViewEntity],
  });
  const repository = new CasesRepository(store.db, n.relay ?? { kick: () => {} });
  // As the service's start does: on a new database it only marks the lists ready.
  await repository.lists.backfill();
  const cases = new Cases({
    cases: repository,
    clientLinks: new ClientLinks(n.clients ?? { facts: async () => null }, new ViewsRepository<ClientView>(store.db, CLIENT_VIEWS)),
    users: n.users ?? { find: async () => new Map() },
    activities: n.activities ?? { listForCase: async () => ({ items: [], total: 0 }) },
  });
  const syncs = new TeamSyncs({ db: store.db, logger: quietLogger, work: cases.syncWork(), passMs: 100, ...n.syncs });
  await syncs.start();
  const app = buildCasesApp({ cases, syncs, db: store.db, internalToken: INTERNAL_TOKEN, logger: process.env.DEBUG_LOG ? { level: 'error' } : false });
  const answers = checkWholeAnswers(app);
  await app.ready();
  return {
    app,
    cases,
    repository,
    db: store.db,
    syncs,
    call: callAs(() => app, INTERNAL_TOKEN),
    close: async () => {
      await syncs.stop();
      await app.close();
      await store.db.dropDatabase();
      await store.close();
      assertWholeAnswers(answers);
    },
  };
}
