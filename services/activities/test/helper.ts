// The activities app in process on its own database, with its neighbours faked:
// the cases, clients, deals and users the test names exist, nothing else.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Db } from 'mongodb';
import { defaultTeamSettings, type Identity } from '@lpm/shared/identity';
import { newId } from '@lpm/shared/ids';
import { TeamSyncs, type TeamSyncsOptions } from '@lpm/shared/jobs/team-syncs';
import { openStore } from '@lpm/shared/store/orm';
import type { Relay } from '@lpm/shared/store/record-store-types';
import type { DirectoryUser } from '@lpm/shared/upstream/user-directory';
import { callAs } from '@lpm/test-kit/api';
import { quietLogger } from '@lpm/test-kit/wait';
import { assertWholeAnswers, checkWholeAnswers } from '@lpm/test-kit/whole-answers';
import { buildActivitiesApp } from '../src/app.ts';
import { CaseLinks } from '@lpm/shared/views/case-links';
import { CASE_VIEWS, CaseViewEntity, type CaseView } from '@lpm/shared/views/case-view-entity';
import { ClientLinks } from '@lpm/shared/views/client-links';
import { CLIENT_VIEWS, ClientViewEntity, type ClientView } from '@lpm/shared/views/client-view-entity';
import { ActivityEntity } from '../src/data/activity-entity.ts';
import { ActivitiesRepository } from '../src/data/activities-repository.ts';
import { ViewsRepository } from '@lpm/shared/views/views-repository';
import { Activities } from '../src/domain/activities.ts';
import type { ClientFacts } from '@lpm/shared/upstream/clients-service';
import type { CaseFacts } from '@lpm/shared/upstream/cases-service';

export const INTERNAL_TOKEN = randomBytes(32).toString('hex');

export function identity(timezone = 'America/Sao_Paulo'): Identity {
  return { teamId: newId('team'), userId: newId('user'), scopes: ['read', 'write', 'admin'], settings: defaultTeamSettings(timezone) };
}

/** What exists around the activities service, per team. */
export class World {
  cases = new Map<string, CaseFacts & { team: string }>();
  clients = new Map<string, ClientFacts & { team: string }>();
  deals = new Map<string, string>();
  users = new Map<string, DirectoryUser & { team: string }>();

  addCase(team: string, title: string, number: string | null = null): CaseFacts {
    const c = { id: newId('case'), title, number, updated_at: new Date().toISOString() };
    this.cases.set(c.id, { ...c, team });
    return c;
  }
  addClient(team: string, name: string): ClientFacts {
    const c: ClientFacts = { id: newId('cli'), name, type: 'PF', email: null, phone: null, status: 'active', updated_at: new Date().toISOString() };
    this.clients.set(c.id, { ...c, team });
    return c;
  }
  addDeal(team: string): string {
    const id = newId('deal');
    this.deals.set(id, team);
    return id;
  }
  addUser(team: string, name: string, email: string): DirectoryUser {
    const u = { id: newId('user'), name, email };
    this.users.set(u.id, { ...u, team });
    return u;
  }
}

export interface ActivitiesUnderTest {
  app: FastifyInstance;
  activities: Activities;
  repository: ActivitiesRepository;
  db: Db;
  world: World;
  clock: { now: Date | null };
  /** The team syncs its internal routes start (run by the test's own pass, every 100 ms). */
  syncs: TeamSyncs;
  call(who: Identity, opts: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export async function startActivities(opts: { relay?: Relay; dbName?: string; syncs?: Partial<TeamSyncsOptions> } = {}): Promise<ActivitiesUnderTest> {
  const store = await openStore({
    url: process.env.MONGO_URL!,
    dbName: opts.dbName ?? `${process.env.MONGO_DB_PREFIX}activities_${randomBytes(4).toString('hex')}`,
    entities: [ActivityEntity, CaseViewEntity, ClientViewEntity],
  });
  const world = new World();
  const clock: { now: Date | null } = { now: null };
  const strip = <T extends { team: string }>(v: T | undefined, team: string) => {
    if (!v || v.team !== team) return null;
    const { team: _t, ...rest } = v;
    return rest;
  };
  const repository = new ActivitiesRepository(store.db, opts.relay ?? { kick: () => {} });
  // As the service's start does: on a new database it only marks the lists ready.
  await repository.lists.backfill();
  const activities = new Activities({
    activities: repository,
    caseLinks: new CaseLinks({ facts: async (who, id) => strip(world.cases.get(id), who.teamId) }, new ViewsRepository<CaseView>(store.db, CASE_VIEWS)),
    clientLinks: new ClientLinks({ facts: async (who, id) => strip(world.clients.get(id), who.teamId) }, new ViewsRepository<ClientView>(store.db, CLIENT_VIEWS)),
    deals: { exists: async (who, id) => world.deals.get(id) === who.teamId },
    users: {
      find: async (teamId, ids) => new Map(ids.flatMap((id) => { const u = strip(world.users.get(id), teamId); return u ? [[id, u] as const] : []; })),
    },
    now: () => clock.now ?? new Date(),
  });
  const syncs = new TeamSyncs({ db: store.db, logger: quietLogger, work: activities.syncWork(), passMs: 100, ...opts.syncs });
  await syncs.start();
  const app = buildActivitiesApp({ activities, syncs, db: store.db, internalToken: INTERNAL_TOKEN, logger: process.env.DEBUG_LOG ? { level: 'error' } : false });
  const answers = checkWholeAnswers(app);
  await app.ready();
  return {
    app,
    activities,
    repository,
    db: store.db,
    world,
    clock,
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
