// The clients app in process on its own database, with the cases service faked.
import { randomBytes } from 'node:crypto';
import type { BrokerOptions } from '@lpm/shared/messaging/broker';
import { createOutboxIndexes } from '@lpm/shared/outbox/fields';
import { OutboxRelay, type OutboxRelayOptions } from '@lpm/shared/outbox/relay';
import type { Relay } from '@lpm/shared/store/record-store-types';
import { brokerBehindProxy, type BrokerBehindProxy } from '@lpm/test-kit/broker-behind-proxy';
import { tapEvents, type EventTap } from '@lpm/test-kit/event-tap';
import { startServiceUnderTest, type ServiceUnderTest } from '@lpm/test-kit/service-under-test';
import { quietLogger } from '@lpm/test-kit/wait';
import { withListsReady } from '@lpm/test-kit/service-parts';
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

export interface ClientsUnderTest extends ServiceUnderTest {
  repository: ClientsRepository;
  /** The relay's nudges, when no relay was given. */
  kicks: number;
}

/**
 * The clients app on its own database, or on `dbName`, another app's (a second
 * replica); `relay` defaults to a counter of nudges, `mongoUrl` to the run's store.
 */
export function startClients(
  opts: { cases?: ClientCases; relay?: Relay; mongoUrl?: string; dbName?: string } = {},
): Promise<ClientsUnderTest> {
  return startServiceUnderTest({
    name: 'clients',
    entities: [ClientEntity],
    dbName: opts.dbName,
    mongoUrl: opts.mongoUrl,
    build: async ({ db, internalToken, logger }) => {
      const parts = { kicks: 0, repository: null as unknown as ClientsRepository };
      parts.repository = await withListsReady(
        new ClientsRepository(db, opts.relay ?? { kick: () => void parts.kicks++ }),
      );
      const clients = new Clients({ clients: parts.repository, cases: opts.cases ?? noCases });
      return { app: buildClientsApp({ clients, db, internalToken, logger }), parts };
    },
  });
}

/** The clients app with the real outbox relay of its clients (`options`: its publisher and logger), started. */
export async function startClientsRelayed(
  options: Omit<OutboxRelayOptions, 'db' | 'collections'>,
): Promise<{ sut: ClientsUnderTest; relay: OutboxRelay }> {
  let relayRef: OutboxRelay | undefined;
  const sut = await startClients({
    relay: {
      kick: (collection, id, events) => relayRef?.kick(collection, id, events),
      get marks() {
        return relayRef?.marks;
      },
    },
  });
  await createOutboxIndexes(sut.db, ['clients']);
  const relay = new OutboxRelay({ ...options, db: sut.db, collections: ['clients'] });
  relayRef = relay;
  relay.start();
  return { sut, relay };
}

export interface RelayedClients {
  sut: ClientsUnderTest;
  relay: OutboxRelay;
  /** The broker the relay publishes to, behind a proxy the test may cut. */
  broker: BrokerBehindProxy;
  /** A tap on the exchange's client events. */
  tap: EventTap;
}

/**
 * Around the file's tests: the clients app relaying its events (`relay`: the relay's
 * pass) to a broker (`broker`: its options) on an exchange of its own named after
 * `name`, and a tap on them, handed to `ready`.
 */
export function relayedClientsSuite(
  name: string,
  ready: (started: RelayedClients) => void,
  options: { broker?: Partial<BrokerOptions>; relay?: Pick<OutboxRelayOptions, 'intervalMs'> } = {},
): void {
  const exchange = `${name}-${randomBytes(4).toString('hex')}`;
  let started: RelayedClients | undefined;
  beforeAll(async () => {
    const broker = await brokerBehindProxy(exchange, options.broker);
    const tap = await tapEvents(exchange, ['client.*']);
    const relayed = await startClientsRelayed({ ...options.relay, publisher: broker.broker, logger: quietLogger });
    started = { ...relayed, broker, tap };
    ready(started);
  });
  afterAll(async () => {
    await started?.relay.stop();
    await started?.sut.close();
    await started?.tap.close();
    await started?.broker.close();
  });
}
