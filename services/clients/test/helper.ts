import { randomBytes } from 'node:crypto';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { openOrm, type Orm } from '@lpm/shared/store/orm';
import { defaultTeamSettings, identityHeaders, type Identity } from '@lpm/shared/identity';
import { newId } from '@lpm/shared/ids';
import { buildClientsApp } from '../src/app.ts';
import { ClientEntity } from '../src/data/client-entity.ts';
import type { CaseDirectory } from '../src/domain/case-directory.ts';

/** A team with no cases, for tests that do not involve the cases service. */
export const noCases: CaseDirectory = {
  countByClient: async (_who, clientIds) => new Map(clientIds.map((id) => [id, 0])),
  hasActiveCases: async () => false,
  listForClient: async () => ({ items: [], total: 0 }),
};

export const INTERNAL_TOKEN = randomBytes(24).toString('hex');

export function identity(scopes: Identity['scopes'] = ['read', 'write', 'admin']): Identity {
  return { teamId: newId('team'), userId: newId('user'), scopes, settings: defaultTeamSettings() };
}

export interface ClientsUnderTest {
  app: FastifyInstance;
  orm: Orm;
  kicks: number;
  call(who: Identity, opts: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

/** The clients app on its own FerretDB database; `relay` defaults to a counter of nudges. */
export async function startClients(opts: { cases?: CaseDirectory; relay?: { kick(collection: string, id: string): void } } = {}): Promise<ClientsUnderTest> {
  const orm = await openOrm({
    url: process.env.MONGO_URL!,
    dbName: `${process.env.MONGO_DB_PREFIX}clients_${randomBytes(4).toString('hex')}`,
    entities: [ClientEntity],
  });
  const sut: ClientsUnderTest = {
    app: undefined as unknown as FastifyInstance,
    orm,
    kicks: 0,
    call: (who, injectOpts) =>
      sut.app.inject({
        ...injectOpts,
        headers: { ...identityHeaders(who, INTERNAL_TOKEN), ...(injectOpts.headers ?? {}) },
      }),
    close: async () => {
      await sut.app.close();
      await orm.em.getConnection().getDb().dropDatabase();
      await orm.close();
    },
  };
  const relay = opts.relay ?? { kick: () => void sut.kicks++ };
  sut.app = buildClientsApp({ orm, relay, cases: opts.cases ?? noCases, internalToken: INTERNAL_TOKEN, logger: process.env.DEBUG_LOG ? { level: 'error' } : false });
  await sut.app.ready();
  return sut;
}
