// The financial app in process on its own database, with its neighbours faked:
// clients and cases are whatever the caller puts in `known` (anything else is 404).
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
import { buildFinancialApp } from '../src/app.ts';
import { CaseLinks } from '@lpm/shared/views/case-links';
import { CASE_VIEWS, CaseViewEntity, type CaseView } from '@lpm/shared/views/case-view-entity';
import { ClientLinks } from '@lpm/shared/views/client-links';
import { CLIENT_VIEWS, ClientViewEntity, type ClientView } from '@lpm/shared/views/client-view-entity';
import { FinancialEntity } from '../src/data/financial-entity.ts';
import { FinancialRepository } from '../src/data/financial-repository.ts';
import { ViewsRepository } from '@lpm/shared/views/views-repository';
import { Financial } from '../src/domain/financial.ts';
import type { ClientFacts } from '@lpm/shared/upstream/clients-service';
import type { CaseFacts } from '@lpm/shared/upstream/cases-service';

export const INTERNAL_TOKEN = randomBytes(32).toString('hex');

export function identity(timezone = 'America/Sao_Paulo'): Identity {
  return { teamId: newId('team'), userId: newId('user'), scopes: ['read', 'write', 'admin'], settings: defaultTeamSettings(timezone) };
}

/** Clients and cases the fake neighbours know, per team. */
export class Neighbours {
  readonly clients = new Map<string, { teamId: string; facts: ClientFacts }>();
  readonly cases = new Map<string, { teamId: string; facts: CaseFacts }>();

  client(who: Identity, name: string, email: string | null = null): ClientFacts {
    const facts: ClientFacts = { id: newId('cli'), name, type: 'PF', email, phone: null, status: 'active', updated_at: new Date().toISOString() };
    this.clients.set(facts.id, { teamId: who.teamId, facts });
    return facts;
  }

  kase(who: Identity, title: string, number: string | null = null): CaseFacts {
    const facts = { id: newId('case'), title, number, updated_at: new Date().toISOString() };
    this.cases.set(facts.id, { teamId: who.teamId, facts });
    return facts;
  }
}

export interface FinancialUnderTest {
  app: FastifyInstance;
  financial: Financial;
  repository: FinancialRepository;
  db: Db;
  neighbours: Neighbours;
  /** The team syncs its internal routes start (run by the test's own pass, every 100 ms). */
  syncs: TeamSyncs;
  /** Moves the service's clock (undefined: the real time). */
  setNow(at: Date | undefined): void;
  call(who: Identity, opts: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export async function startFinancial(opts: { relay?: Relay; syncs?: Partial<TeamSyncsOptions> } = {}): Promise<FinancialUnderTest> {
  const store = await openStore({
    url: process.env.MONGO_URL!,
    dbName: `${process.env.MONGO_DB_PREFIX}financial_${randomBytes(4).toString('hex')}`,
    entities: [FinancialEntity, ClientViewEntity, CaseViewEntity],
  });
  const neighbours = new Neighbours();
  let now: Date | undefined;
  const repository = new FinancialRepository(store.db, opts.relay ?? { kick: () => {} });
  // As the service's start does: on a new database it only marks the lists ready.
  await repository.lists.backfill();
  const financial = new Financial({
    records: repository,
    clientLinks: new ClientLinks(
      { facts: async (who, id) => (neighbours.clients.get(id)?.teamId === who.teamId ? neighbours.clients.get(id)!.facts : null) },
      new ViewsRepository<ClientView>(store.db, CLIENT_VIEWS),
    ),
    caseLinks: new CaseLinks(
      { facts: async (who, id) => (neighbours.cases.get(id)?.teamId === who.teamId ? neighbours.cases.get(id)!.facts : null) },
      new ViewsRepository<CaseView>(store.db, CASE_VIEWS),
    ),
    now: () => now ?? new Date(),
  });
  const syncs = new TeamSyncs({ db: store.db, logger: quietLogger, work: financial.syncWork(), passMs: 100, ...opts.syncs });
  await syncs.start();
  const app = buildFinancialApp({ financial, syncs, db: store.db, internalToken: INTERNAL_TOKEN, logger: process.env.DEBUG_LOG ? { level: 'error' } : false });
  const answers = checkWholeAnswers(app);
  await app.ready();
  return {
    app,
    financial,
    repository,
    db: store.db,
    neighbours,
    syncs,
    setNow: (at) => (now = at),
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
