// The outbox relay's tests' surroundings (outbox.test.ts, outbox-drain.test.ts): a
// scratch database, a broker on an exchange of the file's own, and an observer that
// reads what really went out. Bindings are exported live: outboxSuite() sets them.
import { connect as amqpConnect, type Channel, type ChannelModel, type ConsumeMessage } from 'amqplib';
import { Broker } from '../src/messaging/broker.ts';
import { OutboxRelay, type OutboxRelayOptions } from '../src/outbox/relay.ts';
import { startTcpProxy } from '@lpm/test-kit/tcp-proxy';
import { MongoClient, type Db } from 'mongodb';
import { newEvent, type DomainEvent } from '../src/events.ts';
import { captureLogger } from '@lpm/test-kit/wait';
import { scratchDatabase } from '@lpm/test-kit/scratch-database';

const AMQP_URL = process.env.AMQP_URL!;
/** The file's exchange (outboxSuite). */
export let EXCHANGE = '';
export let db: Db;
export let broker: Broker;
export let observer: Observer;
export const log = captureLogger();

/** Reads straight from RabbitMQ (no proxy, no Broker): what really went out. */
export class Observer {
  received: { event: DomainEvent; msg: ConsumeMessage }[] = [];
  private conn!: ChannelModel;
  private ch!: Channel;
  static async start(queue: string): Promise<Observer> {
    const o = new this();
    o.conn = await amqpConnect(AMQP_URL);
    o.ch = await o.conn.createChannel();
    await o.ch.assertExchange(EXCHANGE, 'topic', { durable: true });
    await o.ch.assertQueue(queue, { durable: false, exclusive: true });
    await o.ch.bindQueue(queue, EXCHANGE, '#');
    await o.ch.consume(
      queue,
      (msg) => {
        if (msg) o.received.push({ event: JSON.parse(msg.content.toString()), msg });
      },
      { noAck: true },
    );
    return o;
  }
  ids(): string[] {
    return this.received.map((r) => r.event.id);
  }
  async close(): Promise<void> {
    await this.conn.close();
  }
}

/** A test's own observer: closing it also forgets what the file's observer saw meanwhile (the test's events reach both). */
class OwnObserver extends Observer {
  override async close(): Promise<void> {
    await super.close();
    // The last of the test's events reaching the file's observer.
    await new Promise((r) => setTimeout(r, 100));
    observer.received = [];
  }
}

export const ownObserver = (queue: string): Promise<Observer> => OwnObserver.start(queue);

/** Relays of one collection on the file's database and broker; `options` replace any of their settings. */
export const relays = {
  /** Scanning every 50 ms for documents of any age. */
  scanning: (collection: string, options: Partial<OutboxRelayOptions> = {}) =>
    new OutboxRelay({
      db,
      collections: [collection],
      publisher: broker,
      logger: log,
      scanIntervalMs: 50,
      scanGraceMs: 0,
      ...options,
    }),
  /** Its scans an hour apart: what goes out is what a write kicks. */
  kicked: (collection: string, options: Partial<OutboxRelayOptions> = {}) =>
    new OutboxRelay({
      db,
      collections: [collection],
      publisher: broker,
      logger: captureLogger(),
      scanIntervalMs: 3_600_000,
      ...options,
    }),
};

export function events(n: number, label: string): DomainEvent[] {
  return Array.from({ length: n }, (_, i) =>
    newEvent('client.updated', 'team_1', { label, i }, { i: i - 1 }, 'user_1'),
  );
}

/**
 * For a test that cuts the store: an observer of its own on `queue`, a broker, and
 * a client reaching the store through a proxy the test cuts; end() stops `relays`,
 * closes all of it, the file's observer forgetting what the test sent.
 */
export async function storeOutage(queue: string) {
  const own = await ownObserver(queue);
  const publisher = await Broker.connect({ url: AMQP_URL, exchange: EXCHANGE, logger: captureLogger() });
  const store = new URL(process.env.MONGO_URL!);
  const proxy = await startTcpProxy(store.hostname, Number(store.port));
  store.port = String(proxy.port);
  const viaProxy = await MongoClient.connect(store.toString(), { serverSelectionTimeoutMS: 500 });
  const end = async (...relays: OutboxRelay[]) => {
    proxy.restore();
    for (const relay of relays) await relay.stop();
    await viaProxy.close();
    await proxy.close();
    await publisher.close();
    await own.close();
  };
  return { own, publisher, proxy, viaDb: viaProxy.db(db.databaseName), end };
}

/** A scratch database and, around the file's tests, the broker and observer on the exchange of `name`. */
export function outboxSuite(name: string): void {
  EXCHANGE = `outbox-test-${name}.events`;
  scratchDatabase(`outbox${name}`, (opened) => (db = opened));
  beforeAll(async () => {
    observer = await Observer.start(`outbox-test-${name}.observer`);
    broker = await Broker.connect({
      url: AMQP_URL,
      exchange: EXCHANGE,
      logger: log,
      connectionName: `outbox-test-${name}`,
    });
  });
  afterAll(async () => {
    await broker.close();
    await observer.close();
  });
}
