import { connect as amqpConnect, type Channel, type ChannelModel, type GetMessage } from 'amqplib';
import { Broker, type BrokerOptions } from '../src/messaging/broker.ts';
import { newEvent, type DomainEvent } from '../src/events.ts';
import { startTcpProxy, type TcpProxy } from '@lpm/test-kit/tcp-proxy';
import { captureLogger, waitFor } from '@lpm/test-kit/wait';

const EXCHANGE = 'broker-test.events';
const AMQP_URL = process.env.AMQP_URL!;

function viaProxyUrl(proxy: TcpProxy): string {
  const url = new URL(AMQP_URL);
  url.host = `127.0.0.1:${proxy.port}`;
  return url.toString();
}

/** A proxy to the test run's broker, which the test cuts and restores. */
const brokerProxy = () => startTcpProxy('127.0.0.1', Number(new URL(AMQP_URL).port || 5672));

/** A Broker on the test exchange through `proxy`, with `options` over the defaults. */
const connectVia = (proxy: TcpProxy, options: Partial<BrokerOptions> = {}) =>
  Broker.connect({ url: viaProxyUrl(proxy), exchange: EXCHANGE, logger: captureLogger(), ...options });

const FAST_RECONNECT = { reconnectMinMs: 20, reconnectMaxMs: 100 };

let raw: ChannelModel;
let ch: Channel;

beforeAll(async () => {
  raw = await amqpConnect(AMQP_URL);
  ch = await raw.createChannel();
  await ch.assertExchange(EXCHANGE, 'topic', { durable: true });
});

afterAll(async () => {
  await raw.close();
});

async function tapQueue(name: string, pattern: string): Promise<() => Promise<GetMessage | false>> {
  await ch.assertQueue(name, { durable: false, exclusive: true });
  await ch.bindQueue(name, EXCHANGE, pattern);
  return () => ch.get(name, { noAck: true });
}

it('when an event is published, then it is routed by type as a persistent JSON message with the event id', async () => {
  const broker = await Broker.connect({ url: AMQP_URL, exchange: EXCHANGE, logger: captureLogger() });
  try {
    const next = await tapQueue('broker-test.routing', 'case.*');
    const e = newEvent('case.phase_changed', 'team_1', { id: 'case_1', phase: 'b' }, { phase: 'a' }, 'user_1');
    await broker.publish(e);
    await broker.publish(newEvent('deal.won', 'team_1', { id: 'deal_1' }));
    let msg: GetMessage | false = false;
    await waitFor('the message', async () => (msg = await next()) !== false);
    const m = msg as unknown as GetMessage;
    expect(JSON.parse(m.content.toString())).toEqual(e);
    expect(m.fields.routingKey).toBe('case.phase_changed');
    expect(m.properties).toMatchObject({
      messageId: e.id,
      type: e.type,
      contentType: 'application/json',
      deliveryMode: 2,
    });
    expect(await next()).toBe(false); // deal.won does not match case.*
  } finally {
    await broker.close();
  }
});

it('when the broker is down at start, then connect returns, publish rejects with a cause, and the connection comes up in the background', async () => {
  const proxy = await brokerProxy();
  proxy.cut();
  const log = captureLogger();
  const broker = await connectVia(proxy, { ...FAST_RECONNECT, logger: log });
  try {
    expect(broker.isConnected()).toBe(false);
    const e = newEvent('client.created', 'team_1', { id: 'cli_1' });
    const err = (await broker.publish(e).catch((x: unknown) => x)) as Error;
    expect(err).toBeInstanceOf(Error);
    expect(err.message).toContain(e.id);
    expect(err.cause).toBeInstanceOf(Error);
    await new Promise((r) => setTimeout(r, 300)); // several failed attempts at 20-100 ms
    expect(log.lines.filter((l) => l.level === 'warn')).toHaveLength(1);

    const next = await tapQueue('broker-test.late', 'client.created');
    proxy.restore();
    await broker.waitForConnection(10_000);
    await broker.publish(e);
    let msg: GetMessage | false = false;
    await waitFor('the message', async () => (msg = await next()) !== false);
    expect((msg as unknown as GetMessage).properties.messageId).toBe(e.id);
    expect(log.lines.some((l) => l.level === 'info' && /restored/.test(l.msg ?? ''))).toBe(true);
  } finally {
    await broker.close();
    await proxy.close();
  }
});

it('when the connection drops, then the broker reconnects and its consumers receive again', async () => {
  const proxy = await brokerProxy();
  const broker = await connectVia(proxy, FAST_RECONNECT);
  const direct = await Broker.connect({ url: AMQP_URL, exchange: EXCHANGE, logger: captureLogger() });
  const got: DomainEvent[] = [];
  try {
    await broker.consume({
      queue: 'broker-test.reconnect',
      bindings: ['activity.#'],
      handler: async (e) => void got.push(e),
    });
    const before = newEvent('activity.created', 'team_1', { n: 1 });
    await direct.publish(before);
    await waitFor('first event', () => got.length === 1);

    proxy.cut();
    await waitFor('disconnected', () => !broker.isConnected());
    const during = newEvent('activity.updated', 'team_1', { n: 2 });
    await direct.publish(during); // waits in the durable queue
    proxy.restore();
    await broker.waitForConnection(10_000);
    // Looked for among the deliveries: the cut can lose the first event's ack, and a redelivery is allowed.
    const received = (id: string) => got.some((e) => e.id === id);
    await waitFor('event published during the outage', () => received(during.id));
    const after = newEvent('activity.completed', 'team_1', { n: 3 });
    await broker.publish(after);
    await waitFor('event published after the outage', () => received(after.id));
    expect([...new Set(got.map((e) => e.id))]).toEqual([before.id, during.id, after.id]);
    expect(got.filter((e) => e.id !== before.id).map((e) => e.id)).toEqual([during.id, after.id]);
  } finally {
    await broker.close();
    await direct.close();
    await proxy.close();
  }
});

it('when the broker does not confirm in time, then publish rejects so the caller keeps the event', async () => {
  const proxy = await brokerProxy();
  const broker = await connectVia(proxy, { publishTimeoutMs: 200 });
  try {
    expect(broker.isConnected()).toBe(true);
    proxy.stall();
    const err = (await broker.publish(newEvent('financial.paid', 'team_1', {})).catch((x: unknown) => x)) as Error;
    expect(err).toBeInstanceOf(Error);
    expect((err.cause as Error).message).toMatch(/no publisher confirm within 200 ms/);
  } finally {
    proxy.restore();
    await broker.close();
    await proxy.close();
  }
});

it('when close is called, then later publishes and consumers are refused', async () => {
  const broker = await Broker.connect({ url: AMQP_URL, exchange: EXCHANGE, logger: captureLogger() });
  await broker.close();
  expect(broker.isConnected()).toBe(false);
  await expect(broker.publish(newEvent('deal.lost', 'team_1', {}))).rejects.toThrow(/failed/);
  await expect(
    broker.consume({ queue: 'broker-test.closed', bindings: ['#'], handler: async () => {} }),
  ).rejects.toThrow(/closed/);
});

it('when a consumer is set up while the broker is down, then it is detached until the broker comes up, and again while the connection is lost (readiness reads this)', async () => {
  const proxy = await brokerProxy();
  proxy.cut();
  const broker = await connectVia(proxy, FAST_RECONNECT);
  try {
    const queue = 'broker-test.attached';
    await broker.consume({ queue, bindings: ['attached.*'], handler: async () => {} });
    expect(broker.detachedConsumers()).toEqual([queue]);
    proxy.restore();
    await waitFor('the consumer attached', () => broker.detachedConsumers().length === 0);
    proxy.cut();
    await waitFor('the consumer detached', () => broker.detachedConsumers().length === 1);
    proxy.restore();
    await waitFor('the consumer attached again', () => broker.detachedConsumers().length === 0);
  } finally {
    await broker.close();
    await proxy.close();
  }
});
