import { connect as amqpConnect, type Channel, type ChannelModel, type GetMessage } from 'amqplib';
import { MongoClient, type Db } from 'mongodb';
import {
  ATTEMPT_HEADER,
  Broker,
  LAST_ERROR_HEADER,
  mongoDedupe,
  purgeDedupeRecords,
  type ConsumeOptions,
  type DeliveryMeta,
} from '../src/messaging/broker.ts';
import { newEvent, type DomainEvent } from '../src/events.ts';
import { brokerBehindProxy } from '@lpm/test-kit/broker-behind-proxy';
import { waitFor, quietLogger, sleep } from '@lpm/test-kit/wait';

const EXCHANGE = 'consumer-test.events';
const AMQP_URL = process.env.AMQP_URL!;

let broker: Broker;
let raw: ChannelModel;
let ch: Channel;
let mongo: MongoClient;
let db: Db;

beforeAll(async () => {
  broker = await Broker.connect({
    url: AMQP_URL,
    exchange: EXCHANGE,
    logger: quietLogger,
    connectionName: 'consumer-test',
  });
  raw = await amqpConnect(AMQP_URL);
  ch = await raw.createChannel();
  mongo = await MongoClient.connect(process.env.MONGO_URL!);
  db = mongo.db(`${process.env.MONGO_DB_PREFIX}consumer`);
});

afterAll(async () => {
  await broker.close();
  await raw.close();
  await db.dropDatabase();
  await mongo.close();
});

const messageCount = async (queue: string) => (await ch.checkQueue(queue)).messageCount;

/** Runs `run` while a consumer with `options` is up, and cancels the consumer after it. */
async function whileConsuming(options: ConsumeOptions, run: () => Promise<void>): Promise<void> {
  const consumer = await broker.consume(options);
  try {
    await run();
  } finally {
    await consumer.cancel();
  }
}

/**
 * A deduplicating consumer on `queue` of `type` events: its dedupe store (of the queue's
 * name, claims stale after `claimStaleMs` if given), the ids its handler noted in
 * `handled` (taking `pauseMs` for each), and whileUp, which runs `run` while the consumer,
 * with `options` besides, is up.
 */
function dedupedNoting(
  queue: string,
  type: string,
  { claimStaleMs, pauseMs = 0 }: { claimStaleMs?: number; pauseMs?: number } = {},
) {
  const dedupe = mongoDedupe(db, queue.replace('.', '-'), claimStaleMs === undefined ? {} : { claimStaleMs });
  const handled: string[] = [];
  const handler = async (got: DomainEvent) => {
    handled.push(got.id);
    if (pauseMs) await sleep(pauseMs);
  };
  const whileUp = (options: Partial<ConsumeOptions>, run: () => Promise<void>) =>
    whileConsuming({ queue, bindings: [type], dedupe, handler, ...options }, run);
  return { dedupe, handled, whileUp };
}

// Each test uses its own event type, so no queue sees another test's events.
function event(type: string, label: string): DomainEvent {
  return newEvent(type, 'team_1', { label }, { status: 'ativo' }, 'user_1');
}

it('when the handler resolves, then the message is acked, and until then a lost connection brings it back', async () => {
  const behind = await brokerBehindProxy(EXCHANGE, { reconnectMinMs: 50, reconnectMaxMs: 300 });
  const { proxy, broker: viaProxy } = behind;
  const deliveries: DeliveryMeta[] = [];
  let finish!: () => void;
  const firstCallBlocks = new Promise<void>((r) => (finish = r));
  try {
    const consumer = await viaProxy.consume({
      queue: 'consumer-test.ack',
      bindings: ['deal.won'],
      handler: async (_e, meta) => {
        deliveries.push(meta);
        if (deliveries.length === 1) await firstCallBlocks;
      },
    });
    const e = event('deal.won', 'ack');
    await broker.publish(e);
    await waitFor('first delivery', () => deliveries.length === 1);
    // The handler has not finished: the message must not have been acked.
    proxy.cut();
    await waitFor('disconnect', () => !viaProxy.isConnected());
    finish();
    proxy.restore();
    await waitFor('redelivery after reconnect', () => deliveries.length === 2);
    expect(deliveries[1]).toMatchObject({ redelivered: true, attempt: 1, routingKey: 'deal.won' });
    await consumer.cancel();
    // Cancelling closes the channel: anything left unacked would be back in the queue.
    expect(await messageCount('consumer-test.ack')).toBe(0);
    expect(deliveries).toHaveLength(2);
  } finally {
    finish();
    await behind.close();
  }
});

it('when a handler fails twice and then succeeds, then it is retried after the delay and succeeds', async () => {
  const attempts: number[] = [];
  const e = event('deal.lost', 'flaky');
  await whileConsuming(
    {
      queue: 'consumer-test.flaky',
      bindings: ['deal.lost'],
      retryDelayMs: 100,
      maxAttempts: 5,
      handler: async (got, meta) => {
        if (got.id !== e.id) return;
        attempts.push(meta.attempt);
        if (attempts.length <= 2) throw new Error(`transient failure ${attempts.length}`);
      },
    },
    async () => {
      await broker.publish(e);
      await waitFor('three attempts', () => attempts.length === 3);
      await waitFor('queue settled', async () => (await messageCount('consumer-test.flaky.retry')) === 0);
    },
  );
  expect(attempts).toEqual([1, 2, 3]);
  expect(await messageCount('consumer-test.flaky')).toBe(0);
  expect(await messageCount('consumer-test.flaky.dlq')).toBe(0);
});

it('when a handler always fails, then the message lands in the DLQ after maxAttempts and is not delivered again', async () => {
  let calls = 0;
  const e = event('deal.updated', 'poison');
  let dead: GetMessage | false = false;
  await whileConsuming(
    {
      queue: 'consumer-test.poison',
      bindings: ['deal.updated'],
      retryDelayMs: 50,
      maxAttempts: 3,
      handler: async () => {
        calls++;
        throw new Error('always broken');
      },
    },
    async () => {
      await broker.publish(e);
      await waitFor(
        'dead-lettered',
        async () => (dead = await ch.get('consumer-test.poison.dlq', { noAck: true })) !== false,
      );
      // Several retry delays' worth: a message still cycling would be handled again.
      await sleep(500);
    },
  );
  expect(calls).toBe(3);
  const msg = dead as unknown as GetMessage;
  expect(JSON.parse(msg.content.toString())).toEqual(e);
  expect(msg.properties.messageId).toBe(e.id);
  expect(msg.properties.headers).toMatchObject({ [ATTEMPT_HEADER]: 3, [LAST_ERROR_HEADER]: 'always broken' });
  expect(await messageCount('consumer-test.poison')).toBe(0);
  expect(await messageCount('consumer-test.poison.retry')).toBe(0);
  expect(await messageCount('consumer-test.poison.dlq')).toBe(0);
});

it('when the same event id is delivered again, then the handler runs once', async () => {
  const { dedupe, handled, whileUp } = dedupedNoting('consumer-test.dedupe', 'deal.created');
  const e = event('deal.created', 'dup');
  const other = event('deal.created', 'other');
  await whileUp({}, async () => {
    await broker.publish(e);
    await waitFor('first', () => handled.length === 1);
    await broker.publish(e); // e.g. the outbox republished after a crash
    await broker.publish(other);
    await waitFor('other', () => handled.length >= 2);
    await waitFor('queue drained', async () => (await messageCount('consumer-test.dedupe')) === 0);
  });
  expect(handled).toEqual([e.id, other.id]);
  expect(await dedupe.claim(e.id)).toBe('done');
  expect(await db.collection('dedupe_consumer-test-dedupe').countDocuments()).toBe(2);
});

it('when dedupeWhen passes over an event, then its handler runs without a claim, and the others are claimed', async () => {
  const { handled, whileUp } = dedupedNoting('consumer-test.dedupe-when', 'deal.updated');
  const skipped = event('deal.updated', 'nothing to do');
  const claimed = event('deal.updated', 'counts');
  await whileUp({ dedupeWhen: (got) => (got.data.object as { label: string }).label !== 'nothing to do' }, async () => {
    await broker.publish(skipped);
    await broker.publish(claimed);
    await waitFor('both handled', () => handled.length === 2);
    await waitFor('queue drained', async () => (await messageCount('consumer-test.dedupe-when')) === 0);
  });
  expect(handled.sort()).toEqual([skipped.id, claimed.id].sort());
  const claims = await db
    .collection<{ _id: string; state: string }>('dedupe_consumer-test-dedupe-when')
    .find()
    .toArray();
  expect(claims.map((c) => [c._id, c.state])).toEqual([[claimed.id, 'done']]);
});

it('when dedupe records are older than the retention, then the purge deletes them from every consumer and nothing else', async () => {
  const now = Date.now();
  const old = new Date(now - 8 * 24 * 3600_000);
  const recent = new Date(now - 3600_000);
  const a = db.collection<{ _id: string; state: string; at: Date }>('dedupe_purge-a');
  const b = db.collection<{ _id: string; state: string; at: Date }>('dedupe_purge-b');
  const other = db.collection<{ _id: string; at: Date }>('purge_not_dedupe');
  await a.insertMany([
    { _id: 'a-old', state: 'done', at: old },
    { _id: 'a-new', state: 'done', at: recent },
  ]);
  await b.insertMany([
    { _id: 'b-old', state: 'processing', at: old },
    { _id: 'b-new', state: 'processing', at: recent },
  ]);
  await other.insertOne({ _id: 'x', at: old });
  expect(await purgeDedupeRecords(db, new Date(now - 7 * 24 * 3600_000))).toBe(2);
  const idsIn = async (claims: typeof a) => (await claims.find().toArray()).map((d) => d._id);
  expect(await idsIn(a)).toEqual(['a-new']);
  expect(await idsIn(b)).toEqual(['b-new']);
  expect(await other.countDocuments()).toBe(1);
  // A purged event id can be claimed again (its redelivery window is long past).
  expect(await mongoDedupe(db, 'purge-a').claim('a-old')).toBe('new');
});

it('when one event is delivered five times at once to a slow handler, then the handler runs once', async () => {
  const { handled, whileUp } = dedupedNoting('consumer-test.concurrent', 'deal.updated', { pauseMs: 300 });
  const e = event('deal.updated', 'burst');
  await whileUp({ prefetch: 10, retryDelayMs: 200 }, async () => {
    await Promise.all(Array.from({ length: 5 }, () => broker.publish(e)));
    const claims = db.collection<{ _id: string; state: string }>('dedupe_consumer-test-concurrent');
    await waitFor('claim completed', async () => (await claims.findOne({ _id: e.id }))?.state === 'done');
    await new Promise((r) => setTimeout(r, 1000)); // the busy deliveries come back from the retry queue and are skipped
  });
  expect(handled).toEqual([e.id]);
});

it("when a delivery died holding the event's claim, then its redeliveries wait for the claim to go stale and the event is handled once, never dead-lettered", async () => {
  // The drill found cases counting an activity event never: a consumer killed mid-handler
  // (or one whose release the store refused during a cut) leaves the claim 'processing';
  // each redelivery found it busy, and five busy deliveries sent the event to the DLQ.
  const queue = 'consumer-test.stale-claim';
  const { dedupe, handled, whileUp } = dedupedNoting(queue, 'activity.created', { claimStaleMs: 8000 });
  const e = event('activity.created', 'claimed by a dead delivery');
  await whileUp({ retryDelayMs: 200, transientDelaysMs: [500, 1000] }, async () => {
    // What the delivery that died left: its claim, taken and never completed nor released.
    expect(await dedupe.claim(e.id)).toBe('new');
    await broker.publish(e);
    await waitFor('handled once the claim is stale', () => handled.length === 1, 60_000);
    await waitFor('queue drained', async () => (await messageCount(queue)) === 0);
  });
  expect(handled).toEqual([e.id]);
  expect(await messageCount(`${queue}.dlq`)).toBe(0);
  expect(await dedupe.claim(e.id)).toBe('done');
}, 90_000);

it('when a message is not valid JSON, then it goes straight to the DLQ without reaching the handler', async () => {
  let calls = 0;
  let dead: GetMessage | false = false;
  await whileConsuming(
    {
      queue: 'consumer-test.garbage',
      bindings: ['deal.phase_changed'],
      handler: async () => {
        calls++;
      },
    },
    async () => {
      ch.sendToQueue('consumer-test.garbage', Buffer.from('{"id": "evt_x", oops'), { messageId: 'garbage-1' });
      await waitFor(
        'dead-lettered',
        async () => (dead = await ch.get('consumer-test.garbage.dlq', { noAck: true })) !== false,
      );
    },
  );
  const msg = dead as unknown as GetMessage;
  expect(msg.content.toString()).toBe('{"id": "evt_x", oops');
  expect(msg.properties.messageId).toBe('garbage-1');
  expect(String(msg.properties.headers?.[LAST_ERROR_HEADER])).toMatch(/not valid JSON/);
  expect(calls).toBe(0);
  expect(await messageCount('consumer-test.garbage')).toBe(0);
});

it('when a queue was declared with another retry delay, then consume rejects with the cause', async () => {
  await broker
    .consume({
      queue: 'consumer-test.conflict',
      bindings: ['case.created'],
      retryDelayMs: 100,
      handler: async () => {},
    })
    .then((c) => c.cancel());
  await expect(
    broker.consume({
      queue: 'consumer-test.conflict',
      bindings: ['case.created'],
      retryDelayMs: 200,
      handler: async () => {},
    }),
  ).rejects.toMatchObject({
    message: expect.stringMatching(/consumer setup/),
    cause: expect.objectContaining({ message: expect.stringMatching(/PRECONDITION_FAILED/) }),
  });
  expect(broker.isConnected()).toBe(true);
});

it('when a consumer retires a binding it no longer declares, then its queue no longer receives those events and still receives the rest', async () => {
  const queue = 'consumer-test.retired';
  const handled: string[] = [];
  const handler = async (e: DomainEvent) => {
    handled.push(e.type);
  };
  const before = await broker.consume({ queue, bindings: ['financial.created', 'financial.paid'], handler });
  await broker.publish(event('financial.paid', 'bound'));
  await waitFor('the bound event handled', () => handled.length === 1);
  await before.cancel();

  const after = await broker.consume({
    queue,
    bindings: ['financial.created'],
    retiredBindings: ['financial.paid'],
    handler,
  });
  await after.cancel();
  await broker.publish(event('financial.paid', 'retired'));
  await broker.publish(event('financial.created', 'kept'));
  // Published with confirms: whatever the exchange routed is in the queue by now.
  expect(await messageCount(queue)).toBe(1);
  const again = await broker.consume({
    queue,
    bindings: ['financial.created'],
    retiredBindings: ['financial.paid'],
    handler,
  });
  await waitFor('the kept event handled', () => handled.length === 2);
  await again.cancel();
  expect(handled).toEqual(['financial.paid', 'financial.created']);
});
