// The clients app in process on its own database, with the cases service faked.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Db } from 'mongodb';
import { defaultTeamSettings, type Identity } from '@lpm/shared/identity';
import { newId } from '@lpm/shared/ids';
import type { Relay } from '@lpm/shared/store/record-store-types';
import { openStore } from '@lpm/shared/store/orm';
import { callAs } from '@lpm/test-kit/api';
import { assertWholeAnswers, checkWholeAnswers } from '@lpm/test-kit/whole-answers';
import { buildClientsApp } from '../src/app.ts';
import { ClientEntity } from '../src/data/client-entity.ts';
import { ClientsRepository } from '../src/data/clients-repository.ts';
import { Clients } from '../src/domain/clients.ts';
import type { ClientCases } from '../src/upstream/cases-service.ts';

/** A team with no cases, for tests that do not involve the cases service. */
export const noCases: ClientCases = {
  countByClient: async (_who, clientIds) => new Map(clientIds.map((id) => [id, 0])),
  hasActiveCases: async () => false,
  listForClient: async () => ({ items: [], total: 0 }),
};

export const INTERNAL_TOKEN = randomBytes(32).toString('hex');

export function identity(scopes: Identity['scopes'] = ['read', 'write', 'admin']): Identity {
  return { teamId: newId('team'), userId: newId('user'), scopes, settings: defaultTeamSettings() };
}

export interface ClientsUnderTest {
  app: FastifyInstance;
  db: Db;
  repository: ClientsRepository;
  kicks: number;
  call(who: Identity, opts: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/**
 * The clients app on its own database, or on `dbName`, another app's (a second
 * replica); `relay` defaults to a counter of nudges, `mongoUrl` to the run's store.
 */
export async function startClients(opts: { cases?: ClientCases; relay?: Relay; mongoUrl?: string; dbName?: string } = {}): Promise<ClientsUnderTest> {
  const store = await openStore({
    url: opts.mongoUrl ?? process.env.MONGO_URL!,
    dbName: opts.dbName ?? `${process.env.MONGO_DB_PREFIX}clients_${randomBytes(4).toString('hex')}`,
    entities: [ClientEntity],
  });
  const relay = opts.relay ?? { kick: () => void sut.kicks++ };
  const repository = new ClientsRepository(store.db, relay);
  // As the service's start does: on a new database it only marks the lists ready.
  await repository.lists.backfill();
  const clients = new Clients({ clients: repository, cases: opts.cases ?? noCases });
  const app = buildClientsApp({ clients, db: store.db, internalToken: INTERNAL_TOKEN, logger: process.env.DEBUG_LOG ? { level: 'error' } : false });
  const answers = checkWholeAnswers(app);
  const sut: ClientsUnderTest = {
    app,
    db: store.db,
    repository,
    kicks: 0,
    call: callAs(() => app, INTERNAL_TOKEN),
    close: async () => {
      await app.close();
      await store.db.dropDatabase();
      await store.close();
      assertWholeAnswers(answers);
    },
  };
  await app.ready();
  return sut;
}
