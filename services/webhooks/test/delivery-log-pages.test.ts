// The delivery log's pages by minute counts: the fold counts each delivery
// once, from the tally of its first attempt or its skip, and moves past hours to hour
// documents; pages read by the minute marker agree with the plain query in both orders
// and at any depth; a move repeated after a crash adds nothing; deliveries stored
// before the markers are counted by the conversion of earlier shapes, once; retention's recount follows
// the purge. On the real store, through the repositories.
import { newId } from '@lpm/shared/ids';
import { CountersMigration } from '../src/data/counters-migration.ts';
import { CountersRepository } from '../src/data/counters-repository.ts';
import { countsInLog, DeliveriesRepository, dropWebhookHistory } from '../src/data/deliveries-repository.ts';
import { decodeMinutes, logMarkers, minuteOf, splitBeforeHour } from '../src/data/delivery-log-counts.ts';
import type {
  AttemptRecord,
  DeliveryRecord,
  WebhookCountersRecord,
  WebhookRecord,
} from '../src/data/webhook-entity.ts';
import { startWebhooks, type WebhooksUnderTest } from './helper.ts';
import { equalityOn, watchStore, type WatchedStore } from './store-commands.ts';
import { deliveryRecord, webhookRecord } from './records.ts';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

let sut: WebhooksUnderTest;
let watched: WatchedStore;
let deliveries: DeliveriesRepository;
let counters: CountersRepository;

beforeAll(async () => {
  sut = await startWebhooks();
  watched = await watchStore(sut.db.databaseName);
  deliveries = new DeliveriesRepository(watched.db, { attemptClaimMs: 60_000 });
  counters = new CountersRepository(watched.db);
});

afterAll(async () => {
  await watched?.close();
  await sut?.close();
});

const TEAM = 'team_log';
let seq = 0;

/** A stored webhook's id (the fold counts only webhooks that exist). */
async function newHook(): Promise<string> {
  const hook = webhookRecord(TEAM, `https://example.com/${seq}`);
  await watched.db.collection<WebhookRecord>('webhooks').insertOne(hook);
  return hook._id;
}

function deliveryOf(
  webhookId: string,
  createdAt: Date,
  status: DeliveryRecord['status'] = 'succeeded',
): DeliveryRecord {
  const id = `dlv_${String(++seq).padStart(8, '0')}${newId('wh').slice(3, 11)}`;
  return deliveryRecord(TEAM, webhookId, status, createdAt, { _id: id, event_id: `evt_${id}` });
}

const attemptOf = (d: DeliveryRecord, n = 1): AttemptRecord => ({
  _id: `${d._id}:${n}`,
  team_id: d.team_id,
  webhook_id: d.webhook_id,
  delivery_id: d._id,
  attempt: n,
  at: new Date(),
  ok: true,
  status_code: 200,
  latency_ms: 5,
  error_class: null,
  response_body: null,
});

/** A delivery stored with its first attempt, as the fan-out stores one. */
async function delivered(webhookId: string, createdAt: Date): Promise<DeliveryRecord> {
  const d = deliveryOf(webhookId, createdAt);
  await deliveries.attempts.recordAttempt(attemptOf(d), d.created_at);
  expect(await deliveries.insert(d)).toBe('inserted');
  return d;
}

/** Folds until no tally is left (`fold`: a process's counters repository). */
async function foldAll(fold = counters): Promise<void> {
  for (let i = 0; i < 10 && (await watched.db.collection('attempt_tallies').countDocuments()) > 0; i++)
    await fold.fold();
  await fold.fold();
}

/** The page as the plain query gives it. */
async function plainPage(webhookId: string, direction: 1 | -1, skip: number, limit: number): Promise<string[]> {
  const found = await watched.db
    .collection<DeliveryRecord>('deliveries')
    .find({ webhook_id: webhookId })
    .sort({ created_at: direction, _id: direction })
    .skip(skip)
    .limit(limit)
    .toArray();
  return found.map((d) => d._id);
}

async function expectPagesAgree(webhookId: string, total: number): Promise<void> {
  for (const sort of ['-created_at', 'created_at'] as const) {
    for (const [page, limit] of [
      [1, 20],
      [2, 20],
      [3, 7],
      [Math.ceil(total / 10), 10],
      [1, 100],
    ]) {
      const got = await deliveries.page(TEAM, webhookId, { page, limit, sort });
      expect(got.total).toBe(total);
      expect(got.records.map((d) => d._id)).toEqual(
        await plainPage(webhookId, sort === 'created_at' ? 1 : -1, (page - 1) * limit, limit),
      );
    }
  }
}

/** `n` deliveries spread over the last `hours` hours, some minutes holding several. */
async function spread(webhookId: string, n: number, hours: number): Promise<DeliveryRecord[]> {
  const now = Date.now();
  const made: DeliveryRecord[] = [];
  for (let i = 0; i < n; i++)
    made.push(
      await delivered(webhookId, new Date(now - Math.floor((((i * 7919) % n) / n) * hours * HOUR_MS) - (i % 3) * 1000)),
    );
  return made;
}

test('when deliveries over three hours are folded, then every page read by minute markers is the plain query page, and its total is the count', async () => {
  const hook = await newHook();
  await spread(hook, 90, 3);
  await foldAll();
  // A second round: the first fold's minutes of past hours move to their hour documents.
  await spread(hook, 30, 1);
  await foldAll();
  expect(await watched.db.collection('delivery_log_hours').countDocuments({ webhook_id: hook })).toBeGreaterThan(0);

  await expectPagesAgree(hook, 120);
  watched.take();
  await deliveries.page(TEAM, hook, { page: 4, limit: 25, sort: '-created_at' });
  const reads = watched.take().filter((q) => q.collection === 'deliveries' && q.op === 'find');
  expect(reads.length).toBeGreaterThan(0);
  for (const q of reads) expect([q, equalityOn(q, 'log_minute')]).toEqual([q, true]);
});

test('when first attempts are stored but not folded yet, then a page lists them and its total is never below what it lists', async () => {
  const hook = await newHook();
  const minute = Math.floor(Date.now() / MINUTE_MS) * MINUTE_MS - 5 * MINUTE_MS;
  for (let i = 0; i < 3; i++) await delivered(hook, new Date(minute + i * 1000));
  await foldAll();
  expect((await deliveries.page(TEAM, hook, { page: 1, limit: 20, sort: '-created_at' })).total).toBe(3);
  // Two more in the same minute, their tallies not folded: the minute's count says 3.
  for (let i = 3; i < 5; i++) await delivered(hook, new Date(minute + i * 1000));
  const page = await deliveries.page(TEAM, hook, { page: 1, limit: 20, sort: '-created_at' });
  expect(page.records.map((d) => d._id)).toEqual(await plainPage(hook, -1, 0, 20));
  expect(page.records).toHaveLength(5);
  expect(page.total).toBe(5);
  // A page past the end shows nothing, and the count as folded.
  expect(await deliveries.page(TEAM, hook, { page: 2, limit: 20, sort: '-created_at' })).toEqual({
    records: [],
    total: 3,
  });
  await foldAll();
  await expectPagesAgree(hook, 5);
});

test('when a move of past hours is repeated (a fold that died before its update), then the hour documents count it once', async () => {
  const hook = await newHook();
  await spread(hook, 40, 2);
  await foldAll();
  await delivered(hook, new Date());
  const before = (await watched.db.collection<WebhookCountersRecord>('webhook_counters').findOne({ _id: hook }))!;
  // What the next fold moves (at least: the hour may end before it runs).
  const moved = splitBeforeHour(decodeMinutes(before.log_minutes), Math.floor(Date.now() / HOUR_MS)).before;
  expect(moved.size).toBeGreaterThan(0);
  await foldAll();
  // The fold's move again, from the document it read: as after a crash before its update.
  await counters.log.move([{ id: `${hook}:${before.log_rev}`, webhookId: hook, minutes: moved }]);
  await expectPagesAgree(hook, 41);
});

test('when a pending delivery is skipped before any attempt, then the log counts it once, and its later retry adds nothing', async () => {
  const hook = await newHook();
  await delivered(hook, new Date(Date.now() - MINUTE_MS));
  const pending = deliveryOf(hook, new Date(), 'pending');
  await deliveries.insert(pending);
  const stored = (await deliveries.get(pending._id))!;
  expect(countsInLog(stored)).toBe(true);
  await deliveries.skip(stored);
  await deliveries.skip(stored);
  // Retried through the API: a manual attempt 1 does not count the delivery again.
  await deliveries.attempts.recordAttempt(attemptOf(stored), null);
  await foldAll();
  await expectPagesAgree(hook, 2);
  const c = await watched.db.collection<WebhookCountersRecord>('webhook_counters').findOne({ _id: hook });
  expect(c).toMatchObject({ total_deliveries: 2 });
});

test('when deliveries were stored before the markers, then the plain query serves the log until the backfill counts them once, their first attempts included', async () => {
  const hook = await newHook();
  const col = watched.db.collection<DeliveryRecord>('deliveries');
  const old = Array.from({ length: 12 }, (_, i) =>
    deliveryOf(hook, new Date(Date.now() - 2 * HOUR_MS - i * 7 * MINUTE_MS), i % 4 === 0 ? 'pending' : 'succeeded'),
  );
  await col.insertMany(old);
  // As an earlier version's fold left it: counters without the log's fields.
  await watched.db.collection('webhook_counters').insertOne({
    _id: hook as never,
    team_id: TEAM,
    total_deliveries: 9,
    failed_deliveries: 0,
    last_triggered_at: null,
    last_counted: [],
  });
  expect((await deliveries.page(TEAM, hook, { page: 1, limit: 5, sort: '-created_at' })).total).toBe(12);

  await delivered(hook, new Date());
  // A process started after the upgrade: the conversion of the earlier shapes (the log's backfill), then its folds.
  const restarted = new CountersRepository(watched.db);
  expect(await new CountersMigration(watched.db, restarted).run()).toBe(true);
  await foldAll(restarted);
  // A first attempt still owed to an old delivery, made after the backfill marked it: not counted again.
  const owed = (await deliveries.get(old[0]._id))!;
  expect(owed.log_backfilled).toBe(true);
  expect(countsInLog(owed)).toBe(false);
  await deliveries.attempts.recordAttempt(attemptOf(owed), countsInLog(owed) ? owed.created_at : null);
  await foldAll();

  expect(await watched.db.collection<WebhookCountersRecord>('webhook_counters').findOne({ _id: hook })).toMatchObject({
    log_ready: true,
  });
  watched.take();
  await expectPagesAgree(hook, 13);
  expect(
    watched.take().some((q) => q.collection === 'deliveries' && q.op === 'find' && equalityOn(q, 'log_minute')),
  ).toBe(true);
});

test('when retention purges old deliveries, then the log counts the hours it purged again, and the pages agree', async () => {
  const hook = await newHook();
  const now = Date.now();
  const retention = 2 * HOUR_MS;
  for (let i = 0; i < 30; i++) await delivered(hook, new Date(now - 4 * HOUR_MS + i * 6 * MINUTE_MS));
  await foldAll();
  await delivered(hook, new Date());
  await foldAll();
  const cutoff = new Date(now - retention);
  // One delivery from before the cutoff was changed after it: kept.
  const kept = (await watched.db
    .collection<DeliveryRecord>('deliveries')
    .findOne({ webhook_id: hook, created_at: { $lt: new Date(cutoff.getTime() - HOUR_MS) } }))!;
  await deliveries.recordOutcome(kept._id, {
    status: 'succeeded',
    attempts_count: 2,
    last_attempt_at: new Date(),
    next_attempt_at: null,
  });

  const doomed = await watched.db
    .collection('deliveries')
    .countDocuments({ webhook_id: hook, updated_at: { $lt: cutoff } });
  expect(doomed).toBeGreaterThan(0);

  await deliveries.purgeOlderThan(cutoff);
  expect(await counters.recountLogBefore(cutoff)).toBe(true);

  const left = await watched.db.collection('deliveries').countDocuments({ webhook_id: hook });
  expect(left).toBe(31 - doomed);
  await expectPagesAgree(hook, left);
  expect(minuteOf(kept.created_at)).toBeLessThan(minuteOf(cutoff));
});

/**
 * A webhook with `count` deliveries in one minute three hours ago, folded, and another team's delivery written
 * straight to the store with the markers of that minute and hour, under the webhook's own id or another.
 */
async function hookWithIntruder(count: number, { ownWebhookId }: { ownWebhookId: boolean }) {
  const hook = await newHook();
  const minute = Math.floor(Date.now() / MINUTE_MS) * MINUTE_MS - 3 * HOUR_MS;
  for (let i = 0; i < count; i++) await delivered(hook, new Date(minute + i * 1000));
  await foldAll();
  // Newest of the minute, so a page that let it in would show it first.
  const createdAt = new Date(minute + 30_000);
  const intruder = {
    ...deliveryOf(ownWebhookId ? hook : newId('wh'), createdAt),
    team_id: 'team_intruder',
    ...logMarkers(hook, createdAt),
  };
  await watched.db.collection<DeliveryRecord>('deliveries').insertOne(intruder);
  return { hook, minute, intruder };
}

/** The minute counts the webhook's hour document holds for the hour of `minute`. */
async function hourCounts(hook: string, minute: number) {
  const hour = await watched.db
    .collection<{ _id: string; minutes: string }>('delivery_log_hours')
    .findOne({ _id: `${hook}:${Math.floor(minute / HOUR_MS)}` });
  return decodeMinutes(hour?.minutes);
}

test("when another team's delivery carries the markers of a webhook's minute and hour (written straight to the store), then that webhook's pages and recounted hours leave it out", async () => {
  const { hook, minute, intruder } = await hookWithIntruder(6, { ownWebhookId: false });
  await expectPagesAgree(hook, 6);

  // Retention's recount of the hour reads it by its marker too.
  expect(await counters.recountLogBefore(new Date(minute))).toBe(true);
  expect(await hourCounts(hook, minute)).toEqual(new Map([[minute / MINUTE_MS, 6]]));
  await expectPagesAgree(hook, 6);
  const page = await deliveries.page(TEAM, hook, { page: 1, limit: 20, sort: '-created_at' });
  expect(page.records.map((d) => d._id)).not.toContain(intruder._id);
});

test("when another team's delivery carries the webhook's own id and the markers of its minute and hour (written straight to the store), then the recounted hour and the pages leave it out", async () => {
  const { hook, minute, intruder } = await hookWithIntruder(4, { ownWebhookId: true });

  expect(await counters.recountLogBefore(new Date(minute))).toBe(true);
  expect(await hourCounts(hook, minute)).toEqual(new Map([[minute / MINUTE_MS, 4]]));
  const page = await deliveries.page(TEAM, hook, { page: 1, limit: 20, sort: '-created_at' });
  expect({ total: page.total, ids: page.records.map((d) => d._id) }).toEqual({
    total: 4,
    ids: expect.not.arrayContaining([intruder._id]),
  });
});

test('when a webhook is deleted, then its hour documents go with its history', async () => {
  const hook = await newHook();
  await spread(hook, 10, 3);
  await foldAll();
  await delivered(hook, new Date());
  await foldAll();
  expect(await watched.db.collection('delivery_log_hours').countDocuments({ webhook_id: hook })).toBeGreaterThan(0);
  await dropWebhookHistory(watched.db, hook);
  expect(await watched.db.collection('delivery_log_hours').countDocuments({ webhook_id: hook })).toBe(0);
  expect((await deliveries.page(TEAM, hook, { page: 1, limit: 10 })).total).toBe(0);
});
