// A consumer tells a transient failure (its store unreachable) from a
// poison message. Real RabbitMQ and store; a TCP proxy between the consumer's
// store client and the store is cut for 60 s, longer than the old 5 x 1 s retry
// window, and nothing reaches the DLQ.
import { MongoClient } from 'mongodb';
import { newEvent, type DomainEvent } from '../src/events.ts';
import { AppError } from '../src/errors.ts';
import { isTransientFailure, TRANSIENT_HEADER } from '../src/messaging/broker.ts';
import { scratchBroker, type ScratchBroker } from '@lpm/test-kit/scratch-broker';
import { startTcpProxy, type TcpProxy } from '@lpm/test-kit/tcp-proxy';
import { waitFor, sleep } from '@lpm/test-kit/wait';

const EXCHANGE = 'consumer-transient-test.events';

let sb: ScratchBroker;
let proxy: TcpProxy;
let viaProxy: MongoClient;
let direct: MongoClient;
const dbName = `${process.env.MONGO_DB_PREFIX}consumer_transient`;

beforeAll(async () => {
  sb = await scratchBroker(EXCHANGE);
  const storeUrl = new URL(process.env.MONGO_URL!);
  proxy = await startTcpProxy(storeUrl.hostname, Number(storeUrl.port || 27017));
  const proxied = new URL(storeUrl);
  proxied.host = `127.0.0.1:${proxy.port}`;
  viaProxy = await MongoClient.connect(proxied.toString(), {
    serverSelectionTimeoutMS: 1000,
    connectTimeoutMS: 1000,
    socketTimeoutMS: 5000,
  });
  direct = await MongoClient.connect(storeUrl.toString());
});

afterAll(async () => {
  await sb.close();
  await viaProxy.close(true).catch(() => {});
  await proxy.close();
  await direct.db(dbName).dropDatabase();
  await direct.close();
});

const count = async (queue: string) => (await sb.ch.checkQueue(queue)).messageCount;

it('classifies store errors, 503s and network errors as transient, anything else as not', () => {
  const storeDown = Object.assign(new Error('connection refused'), { name: 'MongoServerSelectionError' });
  expect(isTransientFailure(storeDown)).toBe(true);
  expect(isTransientFailure(new Error('wrapped', { cause: storeDown }))).toBe(true);
  expect(isTransientFailure(new AppError(503, 'SERVICE_UNAVAILABLE', 'clients unavailable'))).toBe(true);
  expect(
    isTransientFailure(
      new TypeError('fetch failed', { cause: Object.assign(new Error('x'), { code: 'ECONNREFUSED' }) }),
    ),
  ).toBe(true);
  expect(isTransientFailure(new AppError(400, 'VALIDATION_ERROR', 'bad'))).toBe(false);
  expect(isTransientFailure(new AppError(404, 'NOT_FOUND', 'gone', {}, { cause: storeDown }))).toBe(false);
  expect(isTransientFailure(new Error('client.created evt_1 does not carry a client'))).toBe(false);
});

it('when the store is cut for 60 s after a burst, then every event is handled once it is back and none is dead-lettered', async () => {
  const queue = sb.broker.queueName('transient.store-writer');
  const schedule = [500, 2000, 5000];
  for (const q of [queue, `${queue}.retry`, `${queue}.dlq`, ...schedule.map((d) => `${queue}.delay.${d}`)])
    sb.declared.add(q);
  const handled = viaProxy.db(dbName).collection<{ _id: string; n: number }>('handled');
  let transientRetries = 0;
  const consumer = await sb.broker.consume({
    queue,
    bindings: ['client.created'],
    transientDelaysMs: schedule,
    handler: async (event, meta) => {
      if (Number(meta.headers[TRANSIENT_HEADER]) > 0) transientRetries++;
      await handled.updateOne({ _id: event.id }, { $inc: { n: 1 } }, { upsert: true });
    },
  });
  try {
    const events: DomainEvent[] = Array.from({ length: 40 }, (_, i) =>
      newEvent('client.created', 'team_1', { i }, null, 'user_1'),
    );
    // A burst, the cut right after it, and more events while the store is away.
    await Promise.all(events.slice(0, 20).map((e) => sb.broker.publish(e)));
    proxy.cut();
    const cutAt = Date.now();
    for (const e of events.slice(20)) await sb.broker.publish(e);
    // Well past the old window (5 deliveries 1 s apart): still nothing in the DLQ.
    while (Date.now() - cutAt < 60_000) {
      expect(await count(`${queue}.dlq`)).toBe(0);
      await sleep(5000);
    }
    expect(await direct.db(dbName).collection('handled').countDocuments()).toBeLessThan(events.length);
    expect(transientRetries).toBeGreaterThan(0);
    proxy.restore();
    await waitFor(
      'every event handled',
      async () => (await direct.db(dbName).collection('handled').countDocuments()) === events.length,
      30_000,
    );
    const docs = await direct.db(dbName).collection<{ _id: string }>('handled').find().toArray();
    expect(docs.map((d) => d._id).sort()).toEqual(events.map((e) => e.id).sort());
    expect(await count(`${queue}.dlq`)).toBe(0);
    await waitFor(
      'queues drained',
      async () =>
        (await count(queue)) +
          (await Promise.all(schedule.map((d) => count(`${queue}.delay.${d}`)))).reduce((a, b) => a + b, 0) ===
        0,
    );
  } finally {
    proxy.restore();
    await consumer.cancel();
  }
}, 150_000);

it('when a transient failure outlasts retryForMs, then the message goes to the DLQ with its attempts and error', async () => {
  const queue = sb.broker.queueName('transient.bounded');
  for (const q of [queue, `${queue}.retry`, `${queue}.dlq`, `${queue}.delay.100`]) sb.declared.add(q);
  let calls = 0;
  const consumer = await sb.broker.consume({
    queue,
    bindings: ['client.updated'],
    transientDelaysMs: [100],
    retryForMs: 1500,
    maxAttempts: 2,
    handler: async () => {
      calls++;
      throw new AppError(503, 'SERVICE_UNAVAILABLE', 'neighbour unavailable');
    },
  });
  try {
    await sb.broker.publish(newEvent('client.updated', 'team_1', {}, null, 'user_1'));
    await waitFor('dead-lettered', async () => (await count(`${queue}.dlq`)) === 1, 20_000);
    // Far more than maxAttempts: transient failures are not counted toward it.
    expect(calls).toBeGreaterThan(2);
    const m = await sb.ch.get(`${queue}.dlq`, { noAck: true });
    if (m === false) throw new Error('no message');
    expect(m.properties.headers?.['x-attempt']).toBe(calls);
    expect(String(m.properties.headers?.['x-last-error'])).toBe('neighbour unavailable');
  } finally {
    await consumer.cancel();
  }
}, 30_000);
