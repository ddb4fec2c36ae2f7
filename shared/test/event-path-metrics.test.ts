// The event path's gauges as a scrape reads them from the real store and broker:
// an outbox's pending events (in documents, or waiting for the broker under a
// mark) and the age of its oldest; a consumer's messages by
// outcome, its queues' depths by kind (the DLQ's included) and its consumers.
import { randomBytes } from 'node:crypto';
import { MongoClient, type Db } from 'mongodb';
import { Broker } from '../src/messaging/broker.ts';
import { watchQueues } from '../src/messaging/queue-metrics.ts';
import { newEvent } from '../src/events.ts';
import { metrics } from '../src/metrics.ts';
import { notFound } from '../src/errors.ts';
import { watchOutboxes } from '../src/outbox/outbox-metrics.ts';
import { OutboxRelay } from '../src/outbox/relay.ts';
import { RecordStore } from '../src/store/record-store.ts';
import { waitFor, quietLogger } from '@lpm/test-kit/wait';

let mongo: MongoClient;
let db: Db;
let broker: Broker;
const run = randomBytes(4).toString('hex');
const EXCHANGE = `metrics-test-${run}.events`;

beforeAll(async () => {
  mongo = await MongoClient.connect(process.env.MONGO_URL!);
  db = mongo.db(`${process.env.MONGO_DB_PREFIX}event_path_metrics`);
  broker = await Broker.connect({
    url: process.env.AMQP_URL!,
    exchange: EXCHANGE,
    logger: quietLogger,
    connectionName: 'metrics-test',
  });
});

afterAll(async () => {
  await broker.close();
  await db.dropDatabase();
  await mongo.close();
});

/** The value of the series `name` whose line has every one of `labels`, or undefined. */
async function sample(name: string, ...labels: string[]): Promise<number | undefined> {
  const line = (await metrics.metrics())
    .split('\n')
    .find((l) => l.startsWith(`${name}{`) && labels.every((label) => l.includes(label)));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

test('when documents hold outbox events, then the scrape counts them by collection and gives the age of the oldest', async () => {
  const at = (secondsAgo: number) => new Date(Date.now() - secondsAgo * 1000).toISOString();
  const col = db.collection<{ _id: string; outbox: { id: string; created_at: string }[]; outbox_pending?: boolean }>(
    'metered',
  );
  await col.insertMany([
    {
      _id: 'a',
      outbox: [
        { id: 'evt_1', created_at: at(90) },
        { id: 'evt_2', created_at: at(5) },
      ],
      outbox_pending: true,
    },
    { _id: 'b', outbox: [{ id: 'evt_3', created_at: at(30) }], outbox_pending: true },
    { _id: 'c', outbox: [] },
  ]);
  await db.collection('empty_outbox').insertOne({ _id: 'x' } as never);
  watchOutboxes(db, ['metered', 'empty_outbox']);

  expect(await sample('outbox_pending_events', 'collection="metered"')).toBe(3);
  const oldest = (await sample('outbox_oldest_event_age_seconds', 'collection="metered"'))!;
  expect(oldest).toBeGreaterThanOrEqual(90);
  expect(oldest).toBeLessThan(150);
  expect(await sample('outbox_pending_events', 'collection="empty_outbox"')).toBe(0);
  expect(await sample('outbox_oldest_event_age_seconds', 'collection="empty_outbox"')).toBe(0);

  await col.updateOne({ _id: 'a' }, { $set: { outbox: [] }, $unset: { outbox_pending: '' } });
  expect(await sample('outbox_pending_events', 'collection="metered"')).toBe(1);
  expect((await sample('outbox_oldest_event_age_seconds', 'collection="metered"'))!).toBeLessThan(90);
});

test("when events wait for the broker under a mark, then the scrape counts them with the documents' and gives the age of the oldest", async () => {
  const relay = new OutboxRelay({
    db,
    collections: ['marked_metered'],
    publisher: { publish: async () => Promise.reject(new Error('broker unreachable')) },
    logger: quietLogger,
    scanIntervalMs: 3_600_000,
  });
  relay.start();
  try {
    const notes = new RecordStore<{ _id: string; team_id: string; version: number }>({
      db,
      collection: 'marked_metered',
      relay,
      idKind: 'cli',
      noun: 'note',
      notFound: () => notFound('Note not found'),
    });
    const old = {
      ...newEvent('client.created', 'team_m', { id: 'cli_m1' }, null, null),
      created_at: new Date(Date.now() - 60_000).toISOString(),
    };
    await notes.insert({ _id: 'cli_m1', team_id: 'team_m', version: 1 }, [old]);
    await notes.insert({ _id: 'cli_m2', team_id: 'team_m', version: 1 }, [
      newEvent('client.created', 'team_m', { id: 'cli_m2' }, null, null),
    ]);
    watchOutboxes(db, ['marked_metered'], relay.marks);
    expect(await sample('outbox_pending_events', 'collection="marked_metered"')).toBe(2);
    expect(await sample('outbox_oldest_event_age_seconds', 'collection="marked_metered"')).toBeGreaterThanOrEqual(60);
  } finally {
    await relay.stop();
  }
});

test("when a consumer acks one message and dead-letters another, then the scrape counts both and shows the DLQ's depth and the queue's consumer", async () => {
  const queue = `${EXCHANGE}.metered`;
  watchQueues(() => broker.queueDepths());
  const handled: string[] = [];
  const consumer = await broker.consume({
    queue,
    bindings: ['client.created'],
    maxAttempts: 1,
    handler: async (e) => {
      handled.push(e.id);
      if ((e.data.object as { label: string }).label === 'poison') throw new Error('cannot handle this one');
    },
  });
  try {
    await broker.publish(newEvent('client.created', 'team_1', { label: 'fine' }, null, 'user_1'));
    await broker.publish(newEvent('client.created', 'team_1', { label: 'poison' }, null, 'user_1'));
    await waitFor(
      'both handled',
      async () =>
        handled.length === 2 &&
        (await sample('consumer_messages_total', `queue="${queue}"`, 'outcome="dead_lettered"')) === 1,
    );
    expect(await sample('consumer_messages_total', `queue="${queue}"`, 'outcome="acked"')).toBe(1);
    expect(await sample('consumer_queue_messages', `queue="${queue}"`, 'kind="dlq"')).toBe(1);
    expect(await sample('consumer_queue_messages', `queue="${queue}"`, 'kind="main"')).toBe(0);
    expect(await sample('consumer_queue_messages', `queue="${queue}"`, 'kind="retry"')).toBe(0);
    expect(await sample('consumer_queue_messages', `queue="${queue}"`, 'kind="delay"')).toBe(0);
    expect(await sample('consumer_queue_consumers', `queue="${queue}"`)).toBe(1);
  } finally {
    await consumer.cancel();
  }
  // A consumer no longer running is no longer reported.
  expect(await sample('consumer_queue_consumers', `queue="${queue}"`)).toBeUndefined();
});
