// The store commands of a request that asks for them (counted-requests.ts): counted
// under its trace in each process its handlers run in, through a call to another
// service, until the answer; not the outbox relay's drain of the events it wrote, nor
// what runs in its context after the answer; nothing for a request that did not ask.
import { randomBytes } from 'node:crypto';
import { defineEntity, p } from '@mikro-orm/mongodb';
import type { FastifyInstance } from 'fastify';
import { Broker } from '../src/messaging/broker.ts';
import { COUNT_COMMANDS_HEADER } from '../src/counted-requests.ts';
import { newEvent } from '../src/events.ts';
import { createHttpApp } from '../src/http/app.ts';
import { metricsRoute } from '../src/http/request-metrics.ts';
import { createOutboxIndexes, outboxOnInsert } from '../src/outbox/fields.ts';
import { OutboxRelay } from '../src/outbox/relay.ts';
import { openStore, type Store } from '../src/store/orm.ts';
import { startTelemetry, type Telemetry } from '../src/telemetry.ts';
import { ServiceClient } from '../src/upstream/service-client.ts';
import { captureLogger, waitFor } from '@lpm/test-kit/wait';

const ThingEntity = defineEntity({
  name: 'Thing',
  collection: 'things',
  properties: { _id: p.string().primary(), n: p.integer() },
});

let telemetry: Telemetry;
let store: Store;
let broker: Broker;
let relay: OutboxRelay;
let front: FastifyInstance;
let back: FastifyInstance;
let frontUrl: string;
const afterAnswer: Promise<unknown>[] = [];

const listen = async (app: FastifyInstance) => {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
};
const traceparent = (traceId: string) => `00-${traceId}-${randomBytes(8).toString('hex')}-01`;
const countedOf = async (traceId: string) =>
  (await fetch(`${frontUrl}/metrics/commands/${traceId}`)).json() as Promise<Record<string, number>>;
const locksTaken = async () => {
  const text = await (await fetch(`${frontUrl}/metrics`)).text();
  const line = text
    .split('\n')
    .find(
      (l) =>
        l.startsWith('store_commands_total{') &&
        l.includes('collection="document_locks"') &&
        l.includes('command="insert"'),
    );
  return line ? Number(line.split(' ').pop()) : 0;
};

beforeAll(async () => {
  telemetry = startTelemetry({ serviceName: 'counted-requests-test' });
  store = await openStore({
    url: process.env.MONGO_URL!,
    dbName: `${process.env.MONGO_DB_PREFIX}counted_${randomBytes(4).toString('hex')}`,
    entities: [ThingEntity],
  });
  await createOutboxIndexes(store.db, ['things']);
  broker = await Broker.connect({
    url: process.env.AMQP_URL!,
    exchange: 'counted-requests-test.events',
    logger: captureLogger(),
    connectionName: 'counted-requests-test',
  });
  // No timed passes: only the request's kick sets the relay's drain going.
  relay = new OutboxRelay({
    db: store.db,
    collections: ['things'],
    publisher: broker,
    logger: captureLogger(),
    intervalMs: 60_000,
  });
  relay.start();
  const things = store.db.collection<{ _id: string; n: number }>('things');

  back = createHttpApp({ name: 'counted-back', logger: false, documented: false });
  back.get('/internal/things/:id', async (req) => ({
    data: await things.findOne({ _id: (req.params as { id: string }).id }),
  }));
  const backClient = new ServiceClient({ name: 'back', baseUrl: await listen(back), internalToken: 'token' });

  front = createHttpApp({ name: 'counted-front', logger: false, documented: false });
  metricsRoute(front);
  front.post('/v1/things', async (_req, reply) => {
    const id = `thing_${randomBytes(6).toString('hex')}`;
    const event = newEvent('client.created', 'team_1', { id }, null, 'user_1');
    await store.db.collection('things').insertOne({ _id: id as never, n: 1, ...outboxOnInsert([event]) });
    relay.kick('things', id, [event]);
    await backClient.request({ teamId: 'team_1' }, 'GET', `/internal/things/${id}`);
    // The relay drains the document meanwhile (a lock, a read, an update, a release), before this answer.
    await new Promise((r) => setTimeout(r, 300));
    reply.raw.once('finish', () => afterAnswer.push(things.findOne({ _id: id })));
    return { data: { id } };
  });
  frontUrl = await listen(front);
});

afterAll(async () => {
  await Promise.all(afterAnswer);
  await front?.close();
  await back?.close();
  await relay?.stop();
  await broker?.close();
  await store?.db.dropDatabase();
  await store?.close();
  await telemetry?.shutdown();
});

test("when a request asks for its store commands, then each process counts its handlers' commands under its trace, and not the relay's drain of its events nor what runs after its answer", async () => {
  const traceId = randomBytes(16).toString('hex');
  const locksBefore = await locksTaken();
  const res = await fetch(`${frontUrl}/v1/things`, {
    method: 'POST',
    headers: { traceparent: traceparent(traceId), [COUNT_COMMANDS_HEADER]: '1' },
  });
  expect(res.status).toBe(200);
  expect(await locksTaken()).toBeGreaterThan(locksBefore);
  await waitFor('the find after the answer', () => afterAnswer.length === 1);
  await Promise.all(afterAnswer);
  expect(await countedOf(traceId)).toEqual({ 'insert things': 1, 'find things': 1 });
});

test('when a request does not ask, then nothing is counted for its trace', async () => {
  const traceId = randomBytes(16).toString('hex');
  const res = await fetch(`${frontUrl}/v1/things`, { method: 'POST', headers: { traceparent: traceparent(traceId) } });
  expect(res.status).toBe(200);
  expect(await countedOf(traceId)).toEqual({});
});
