// Retention and growth: deleting a webhook removes its history; the
// list's counters are kept apart (webhook_counters), each attempt added once by a
// fold, and the list reads no attempts; the retention job drops old deliveries and attempts, orphans of deleted
// webhooks, and Idempotency-Key records past 24 h; once past its first days it
// deletes by day markers and tombstones only (what FerretDB pushes down to SQL). The
// app in process on its own database; old records are seeded through the repositories.
import { newId } from '@lpm/shared/ids';
import { DAY_MS } from '@lpm/shared/time';
import { startHttpsReceiver, type HttpsReceiver } from '@lpm/test-kit/https-receiver';
import { CountersRepository } from '../src/data/counters-repository.ts';
import { DeliveriesRepository } from '../src/data/deliveries-repository.ts';
import type { AttemptRecord, DeliveryRecord, WebhookCountersRecord, WebhookRecord } from '../src/data/webhook-entity.ts';
import { WebhooksRepository } from '../src/data/webhooks-repository.ts';
import { purgeHistory } from '../src/jobs/retention.ts';
import { identity } from '@lpm/test-kit/teams';
import { startWebhooks, type WebhooksUnderTest } from './helper.ts';
import { equalityOn, watchStore } from './store-commands.ts';

const RETENTION_MS = 30 * DAY_MS;

let sut: WebhooksUnderTest;
let receiver: HttpsReceiver;
let webhooks: WebhooksRepository;
let deliveries: DeliveriesRepository;
let counters: CountersRepository;

beforeAll(async () => {
  sut = await startWebhooks({ allowPrivateUrls: true });
  receiver = await startHttpsReceiver(() => ({ status: 200 }));
  webhooks = new WebhooksRepository(sut.db);
  deliveries = new DeliveriesRepository(sut.db, { attemptClaimMs: 60_000 });
  counters = new CountersRepository(sut.db);
});

afterAll(async () => {
  await sut?.close();
  await receiver?.close();
});

type Who = ReturnType<typeof identity>;

async function createHook(who: Who, path: string): Promise<string> {
  const res = await sut.call(who, { method: 'POST', url: '/v1/webhooks', payload: { url: `${receiver.url}/${path}`, events: ['client.created'] } });
  expect(res.statusCode).toBe(201);
  return res.json().data.id;
}

async function listed(who: Who, id: string) {
  const res = await sut.call(who, { method: 'GET', url: '/v1/webhooks' });
  expect(res.statusCode).toBe(200);
  return res.json().data.find((w: { id: string }) => w.id === id);
}

/** A delivery of the webhook, created and last changed at `at`. */
const deliveryOf = (teamId: string, webhookId: string, at = new Date()): DeliveryRecord => ({
    _id: newId('dlv'),
    team_id: teamId,
    webhook_id: webhookId,
    event_id: newId('evt'),
    event_type: 'client.created',
    body: '{"data":{"object":{"cpf":"123.456.789-09","email":"ana@lpm.test"}}}',
    status: 'succeeded',
    attempts_count: 1,
    last_attempt_at: at,
    next_attempt_at: null,
    created_at: at,
    updated_at: at,
});

/** That delivery, stored. */
async function seedDelivery(teamId: string, webhookId: string, at = new Date()): Promise<DeliveryRecord> {
  const delivery = deliveryOf(teamId, webhookId, at);
  expect(await deliveries.insert(delivery)).toBe('inserted');
  return delivery;
}

const attemptOf = (d: DeliveryRecord, n: number, ok: boolean, at = new Date()): AttemptRecord => ({
  _id: `${d._id}:${n}`,
  team_id: d.team_id,
  webhook_id: d.webhook_id,
  delivery_id: d._id,
  attempt: n,
  at,
  ok,
  status_code: ok ? 200 : 500,
  latency_ms: 10,
  error_class: ok ? null : 'http_5xx',
  response_body: null,
});

/** An attempt stored and folded into its webhook's counters. */
async function recordAndCount(a: AttemptRecord): Promise<void> {
  await deliveries.recordAttempt(a);
  await counters.fold();
}

const countOf = (collection: string, filter: object) => sut.db.collection(collection).countDocuments(filter);

test('when a webhook is deleted, then none of its deliveries, attempts or attempt claims remain, and another webhook keeps its history', async () => {
  const who = identity();
  const doomed = await createHook(who, 'doomed');
  const kept = await createHook(who, 'kept');
  for (const id of [doomed, kept]) {
    const d = await seedDelivery(who.teamId, id);
    await recordAndCount(attemptOf(d, 1, false));
    await recordAndCount(attemptOf(d, 2, true));
    expect(await deliveries.claimAttempt(d._id, 3)).not.toBeNull();
  }
  const doomedDeliveries = (await sut.db.collection<DeliveryRecord>('deliveries').find({ webhook_id: doomed }).toArray()).map((d) => d._id);

  const res = await sut.call(who, { method: 'DELETE', url: `/v1/webhooks/${doomed}` });
  expect(res.statusCode).toBe(200);

  expect(await countOf('deliveries', { webhook_id: doomed })).toBe(0);
  expect(await countOf('attempts', { webhook_id: doomed })).toBe(0);
  const claims = (await sut.db.collection<{ _id: string }>('attempt_claims').find({}).toArray()).map((c) => c._id);
  expect(claims.filter((c) => doomedDeliveries.some((d) => c.startsWith(`${d}:`)))).toEqual([]);
  expect(await countOf('deliveries', { webhook_id: kept })).toBe(1);
  expect(await countOf('attempts', { webhook_id: kept })).toBe(2);
  expect(claims.length).toBeGreaterThanOrEqual(2);
});

test('when attempts are recorded, some by several copies at once, then a fold counts each once, and the list shows them without reading an attempt', async () => {
  const who = identity();
  const id = await createHook(who, 'counted');
  expect(await listed(who, id)).toMatchObject({ total_deliveries: 0, failed_deliveries: 0, success_rate: 100, last_triggered_at: null });
  const made: AttemptRecord[] = [];
  for (let i = 0; i < 8; i++) made.push(attemptOf(await seedDelivery(who.teamId, id), 1, i % 4 !== 0, new Date(Date.now() - (8 - i) * 1000)));

  // Each attempt recorded by three copies at once (duplicated jobs, a repeated outcome step).
  const recorded = await Promise.all(made.flatMap((a) => [deliveries.recordAttempt(a), deliveries.recordAttempt({ ...a }), deliveries.recordAttempt({ ...a })]));
  expect(recorded.map((a) => a._id)).toEqual(made.flatMap((a) => [a._id, a._id, a._id]));
  // Not counted until a fold: the counters live apart from the send path.
  expect(await listed(who, id)).toMatchObject({ total_deliveries: 0 });
  expect(await counters.fold()).toBeGreaterThanOrEqual(8);

  const stats = await listed(who, id);
  expect(stats).toMatchObject({ total_deliveries: 8, failed_deliveries: 2, success_rate: 75, last_triggered_at: made[7].at.toISOString() });
  expect(await countOf('attempt_tallies', { webhook_id: id })).toBe(0);
  // The counters are kept: without the attempts the list still shows them.
  await sut.db.collection('attempts').deleteMany({ webhook_id: id });
  expect(await listed(who, id)).toMatchObject({ total_deliveries: 8, failed_deliveries: 2, success_rate: 75 });
});

test('when two replicas fold at the same moment, then each attempt is counted once', async () => {
  const who = identity();
  const id = await createHook(who, 'two-folds');
  for (let i = 0; i < 20; i++) await deliveries.recordAttempt(attemptOf(await seedDelivery(who.teamId, id), 1, i % 2 === 0));
  const replica = new CountersRepository(sut.db);

  await Promise.all([counters.fold(), replica.fold(), counters.fold()]);
  await counters.fold();

  expect(await listed(who, id)).toMatchObject({ total_deliveries: 20, failed_deliveries: 10 });
});

test('when a crash left the tally of the last fold of a webhook undeleted, then folding again adds nothing and the next attempt is added once', async () => {
  const who = identity();
  const id = await createHook(who, 'crash');
  const first = attemptOf(await seedDelivery(who.teamId, id), 1, true);
  await recordAndCount(first);
  // The crash: the counters' update (naming the attempt) was written, the tally's delete was not.
  expect(await sut.db.collection<WebhookCountersRecord>('webhook_counters').findOne({ _id: id })).toMatchObject({ last_counted: [first._id] });
  const tally = { _id: first._id, webhook_id: id, ok: true, at: first.at };
  await sut.db.collection<typeof tally>('attempt_tallies').insertOne(tally);

  expect(await counters.fold()).toBe(0);
  expect(await listed(who, id)).toMatchObject({ total_deliveries: 1, failed_deliveries: 0 });
  expect(await countOf('attempt_tallies', { _id: first._id })).toBe(0);
  await sut.db.collection<typeof tally>('attempt_tallies').insertOne(tally);
  // The next fold deletes the leftover, and adds only the new attempt.
  await recordAndCount(attemptOf(await seedDelivery(who.teamId, id), 1, false));
  expect(await listed(who, id)).toMatchObject({ total_deliveries: 2, failed_deliveries: 1, success_rate: 50 });
  expect(await countOf('attempt_tallies', { webhook_id: id })).toBe(0);
});

test('when more than a batch of attempts of several webhooks wait uncounted, then one fold adds each once with a few commands a batch', async () => {
  const who = identity();
  const ids = [await createHook(who, 'batches-a'), await createHook(who, 'batches-b'), await createHook(who, 'batches-c')];
  // Uncounted attempts of other tests' webhooks would join the fold: fold them first.
  await counters.fold();
  const watched = await watchStore(sut.db.databaseName);
  try {
    const fold = new CountersRepository(watched.db);
    // A process's first fold also counts in the delivery log the deliveries stored before its markers, once.
    await fold.fold();
    // 2,100 attempts (a batch of 2,000 and one of 100), round robin over the three webhooks; every fifth failed.
    const seeded: AttemptRecord[] = [];
    for (let i = 0; i < 2100; i++) {
      const webhookId = ids[i % 3];
      const deliveryId = newId('dlv');
      seeded.push(attemptOf({ _id: deliveryId, team_id: who.teamId, webhook_id: webhookId } as DeliveryRecord, 1, i % 5 !== 0));
    }
    await Promise.all(seeded.map((a) => deliveries.recordAttempt(a)));
    watched.take();

    const folds = [await fold.fold()];
    // A fold keeps within half its lock's time: on a loaded machine the first may stop after its first batch; the next goes on.
    if (folds[0] < 2100) folds.push(await fold.fold());
    expect(folds.reduce((a, b) => a + b)).toBe(2100);

    const sent = watched.take();
    // Attempts stored before the fold counted them: one read, by an equality FerretDB sends to SQL (none here).
    const attemptOps = sent.filter((q) => q.collection === 'attempts');
    expect(attemptOps.map((q) => q.op)).toEqual(folds.map(() => 'find'));
    expect(equalityOn(attemptOps[0], 'counted')).toBe(true);
    // Per batch: one read of the tallies and one delete command, its statement for each webhook naming it by an
    // equality FerretDB sends to SQL (an `$in` of ids alone would read every tally); the counters: one read and an
    // update per webhook.
    const tallyOps = sent.filter((q) => q.collection === 'attempt_tallies');
    expect(tallyOps.map((q) => q.op)).toEqual(['find', 'delete', 'delete', 'delete', 'find', 'delete', 'delete', 'delete']);
    for (const q of tallyOps.filter((t) => t.op === 'delete')) expect(equalityOn(q, 'webhook_id')).toBe(true);
    const counterWrites = sent.filter((q) => q.collection === 'webhook_counters' && q.op === 'update');
    expect(counterWrites).toHaveLength(6);
    expect(sent.length).toBeLessThan(20 * folds.length);
    for (const id of ids) {
      const mine = seeded.filter((a) => a.webhook_id === id);
      expect(await listed(who, id)).toMatchObject({ total_deliveries: 700, failed_deliveries: mine.filter((a) => !a.ok).length });
    }
    expect(await fold.fold()).toBe(0);
  } finally {
    await watched.close();
  }
});

test('when a webhook stored before the counters has attempts, then the list counts them as before, and the fold goes on from there', async () => {
  const who = identity();
  const now = new Date();
  const legacy: WebhookRecord = {
    _id: newId('wh'),
    team_id: who.teamId,
    url: `${receiver.url}/legacy`,
    url_key: `${receiver.url}/legacy`,
    description: null,
    events: ['client.created'],
    active: true,
    secret_sealed: 'sealed',
    active_since: now,
    alert_pending: false,
    created_at: now,
    updated_at: now,
  };
  await sut.db.collection<WebhookRecord>('webhooks').insertOne(legacy);
  const at = new Date(Date.now() - 5000);
  for (const ok of [true, false, true]) {
    // Stored as before: no `counted` field.
    await sut.db.collection<AttemptRecord>('attempts').insertOne(attemptOf(await seedDelivery(who.teamId, legacy._id), 1, ok, at));
  }

  expect(await listed(who, legacy._id)).toMatchObject({ total_deliveries: 3, failed_deliveries: 1, success_rate: 66.7, last_triggered_at: at.toISOString() });
  await recordAndCount(attemptOf(await seedDelivery(who.teamId, legacy._id), 1, true));
  expect(await listed(who, legacy._id)).toMatchObject({ total_deliveries: 4, failed_deliveries: 1, success_rate: 75 });
  expect(await sut.db.collection<WebhookCountersRecord>('webhook_counters').findOne({ _id: legacy._id })).toMatchObject({ total_deliveries: 4 });
});

test('when a webhook still holds its counters itself (stored before webhook_counters), then the fold goes on from them, and counts its attempts left uncounted once', async () => {
  const who = identity();
  const id = await createHook(who, 'kept-itself');
  const leftover = attemptOf(await seedDelivery(who.teamId, id), 1, true);
  await sut.db.collection<AttemptRecord>('attempts').insertOne({ ...leftover, counted: false });
  // Counters kept on the webhook itself, naming its last count, and no counters document.
  await sut.db.collection<WebhookCountersRecord>('webhook_counters').deleteOne({ _id: id });
  await sut.db.collection<WebhookRecord>('webhooks').updateOne({ _id: id }, { $set: { total_deliveries: 10, failed_deliveries: 4, last_triggered_at: leftover.at, last_counted: [leftover._id] } });

  // Recorded then, and not yet counted.
  const uncounted = attemptOf(await seedDelivery(who.teamId, id), 1, false);
  await sut.db.collection<AttemptRecord>('attempts').insertOne({ ...uncounted, counted: false });

  await recordAndCount(attemptOf(await seedDelivery(who.teamId, id), 1, false));

  expect(await listed(who, id)).toMatchObject({ total_deliveries: 12, failed_deliveries: 6 });
  expect(await countOf('attempts', { webhook_id: id, counted: false })).toBe(0);
});

test('when the retention job runs, then deliveries and attempts past retention, and orphans of deleted webhooks are gone, and the rest stays', async () => {
  const who = identity();
  const id = await createHook(who, 'retained');
  const longAgo = new Date(Date.now() - RETENTION_MS - DAY_MS);
  const old = await seedDelivery(who.teamId, id, longAgo);
  await recordAndCount(attemptOf(old, 1, true, longAgo));
  const recent = await seedDelivery(who.teamId, id, new Date(Date.now() - DAY_MS));
  await recordAndCount(attemptOf(recent, 1, true, new Date(Date.now() - DAY_MS)));
  // A deleted webhook's history left by a crash, and the history of one created a moment ago (not an orphan).
  const gone = newId('wh');
  const orphan = await seedDelivery(who.teamId, gone, new Date(Date.now() - 3600_000));
  await sut.db.collection<AttemptRecord>('attempts').insertOne(attemptOf(orphan, 1, false, new Date(Date.now() - 3600_000)));
  const justNow = await seedDelivery(who.teamId, newId('wh'));

  const purged = await purgeHistory({ webhooks, deliveries, counters, retentionMs: RETENTION_MS });

  expect(purged).toMatchObject({ deliveries: 1, attempts: 1, orphanDeliveries: 1, orphanAttempts: 1 });
  expect(await deliveries.get(old._id)).toBeNull();
  expect(await deliveries.attemptById(`${old._id}:1`)).toBeNull();
  expect(await deliveries.get(orphan._id)).toBeNull();
  expect(await deliveries.attemptById(`${orphan._id}:1`)).toBeNull();
  expect(await deliveries.get(recent._id)).not.toBeNull();
  expect(await deliveries.attemptById(`${recent._id}:1`)).not.toBeNull();
  expect(await deliveries.get(justNow._id)).not.toBeNull();
  // The counters keep what was counted; a second run finds nothing more.
  expect(await listed(who, id)).toMatchObject({ total_deliveries: 2 });
  expect(await purgeHistory({ webhooks, deliveries, counters, retentionMs: RETENTION_MS })).toMatchObject({ deliveries: 0, attempts: 0, orphanDeliveries: 0, orphanAttempts: 0 });
});

test('when retention runs past its first days, then every delete names a day marker or a deleted webhook, and what passed the cutoff since is gone while the rest stays', async () => {
  // A database of its own, and instants of its own: the sweeps' cursors start here.
  const watched = await watchStore(`${sut.db.databaseName}_markers`);
  try {
    const hooks = new WebhooksRepository(watched.db);
    const repo = new DeliveriesRepository(watched.db, { attemptClaimMs: 60_000 });
    const deps = { webhooks: hooks, deliveries: repo, counters: new CountersRepository(watched.db), retentionMs: RETENTION_MS };
    const seed = async (webhookId: string, at: Date) => {
      const d = deliveryOf('team_x', webhookId, at);
      await repo.insert(d);
      await repo.recordAttempt(attemptOf(d, 1, true, at));
      return d;
    };
    // The first run deletes by range (records without markers are gone then) and stores the cursors.
    const first = Date.now();
    await purgeHistory(deps, new Date(first));
    // Three days without a run: they are caught up day by day.
    const now = first + 3 * DAY_MS;
    const cutoff = now - RETENTION_MS;
    const hook = newId('wh');
    const dayBefore = await seed(hook, new Date(cutoff - DAY_MS));
    const hourBefore = await seed(hook, new Date(cutoff - 3600_000));
    const hourAfter = await seed(hook, new Date(cutoff + 3600_000));
    // Stored long before the cutoff, last changed after it: kept.
    const retried = await seed(hook, new Date(cutoff - 2 * DAY_MS));
    await repo.recordOutcome(retried._id, { status: 'succeeded', attempts_count: 2, last_attempt_at: new Date(cutoff + 60_000), next_attempt_at: null });
    // History left by a webhook's delete (its tombstone written, the webhook gone) whose process died before dropping it.
    const deleted = newId('wh');
    const left = await seed(deleted, new Date(cutoff + DAY_MS));
    await hooks.remove('team_x', deleted);
    watched.take();

    const purged = await purgeHistory(deps, new Date(now));

    expect(purged).toMatchObject({ deliveries: 2, attempts: 3, orphanDeliveries: 1, orphanAttempts: 1 });
    for (const gone of [dayBefore, hourBefore, left]) expect(await repo.get(gone._id)).toBeNull();
    for (const kept of [hourAfter, retried]) expect(await repo.get(kept._id)).not.toBeNull();
    expect(await repo.attemptById(`${hourAfter._id}:1`)).not.toBeNull();
    const deletes = watched.take().filter((q) => q.op === 'delete' && ['deliveries', 'attempts'].includes(q.collection));
    expect(deletes.length).toBeGreaterThan(0);
    for (const q of deletes) expect([q, ['day', 'updated_day', 'webhook_id'].some((f) => equalityOn(q, f))]).toEqual([q, true]);
  } finally {
    await watched.db.dropDatabase();
    await watched.close();
  }
});
