// The outbox relay's tests' surroundings (outbox.test.ts, outbox-drain.test.ts): a
// scratch database, a broker on an exchange of the file's own, and an observer that
// reads what really went out. Bindings are exported live: outboxSuite() sets them.
import { connect as amqpConnect, type Channel, type ChannelModel, type ConsumeMessage } from 'amqplib';
import { type Db } from 'mongodb';
import { Broker } from '../src/messaging/broker.ts';
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
    const o = new Observer();
    o.conn = await amqpConnect(AMQP_URL);
    o.ch = await o.conn.createChannel();
    await o.ch.assertExchange(EXCHANGE, 'topic', { durable: true });
    await o.ch.assertQueue(queue, { durable: false, exclusive: true });
    await o.ch.bindQueue(queue, EXCHANGE, '#');
    await o.ch.consume(queue, (msg) => {
      if (msg) o.received.push({ event: JSON.parse(msg.content.toString()), msg });
    }, { noAck: true });
    return o;
  }
  ids(): string[] {
    return this.received.map((r) => r.event.id);
  }
  async close(): Promise<void> {
    await this.conn.close();
  }
}

export function events(n: number, label: string): DomainEvent[] {
  return Array.from({ length: n }, (_, i) => newEvent('client.updated', 'team_1', { label, i }, { i: i - 1 }, 'user_1'));
}

/** A scratch database and, around the file's tests, the broker and observer on the exchange of `name`. */
export function outboxSuite(name: string): void {
  EXCHANGE = `outbox-test-${name}.events`;
  scratchDatabase(`outbox${name}`, (opened) => (db = opened));
  beforeAll(async () => {
    observer = await Observer.start(`outbox-test-${name}.observer`);
    broker = await Broker.connect({ url: AMQP_URL, exchange: EXCHANGE, logger: log, connectionName: `outbox-test-${name}` });
  });
  afterAll(async () => {
    await broker.close();
    await observer.close();
  });
}
