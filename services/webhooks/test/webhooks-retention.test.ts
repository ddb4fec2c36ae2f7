// Retention and growth (issue 9): deleting a webhook removes its history; the
// list's counters are kept on the webhook (each attempt counted once) and read no
// attempts; the retention job drops old deliveries and attempts, orphans of deleted
// webhooks, and Idempotency-Key records past 24 h; once past its first days it
// deletes by day markers and tombstones only (what FerretDB pushes down to SQL). The
// app in process on its own database; old records are seeded through the repositories.
import { newId } from '@lpm/shared/ids';
import { DAY_MS } from '@lpm/shared/time';
import { startHttpsReceiver, type HttpsReceiver } from '../../../shared/test/support/https-receiver.ts';
import { DeliveriesRepository } from '../src/data/deliveries-repository.ts';
import type { AttemptRecord, DeliveryRecord, WebhookRecord } from '../src/data/webhook-entity.ts';
import { WebhooksRepository } from '../src/data/webhooks-repository.ts';
import { purgeHistory } from '../src/jobs/retention.ts';
import { identity, startWebhooks, type WebhooksUnderTest } from './helper.ts';
import { equalityOn, watchStore } from './store-commands.ts';

const RETENTION_MS = 30 * DAY_MS;

let sut: WebhooksUnderTest;
let receiver: HttpsReceiver;
let webhooks: WebhooksRepository;
let deliveries: DeliveriesRepository;

beforeAll(async () => {
  sut = await startWebhooks({ allowPrivateUrls: true });
  receiver = await startHttpsReceiver(() => ({ status: 200 }));
  webhooks = new WebhooksRepository(sut.db);
  deliveries = new DeliveriesRepository(sut.db, { attemptClaimMs: 60_000 });
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
async function seedDelivery(teamId: string, webhookId: string, at = new Date()): Promise<DeliveryRecord> {
  return deliveries.insertOrGet({
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

/** An attempt stored and counted, as the attempt step does it (`wait: false`), or as the maintenance sweep does. */
async function recordAndCount(a: AttemptRecord, wait = true): Promise<void> {
  await deliveries.recordAttempt(a);
  await webhooks.countAttempts(a.webhook_id, { wait });
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

test('when attempts are recorded, then the list counts each once even when copies count it at the same time, and reads no attempt to show it', async () => {
  const who = identity();
  const id = await createHook(who, 'counted');
  expect(await listed(who, id)).toMatchObject({ total_deliveries: 0, failed_deliveries: 0, success_rate: 100, last_triggered_at: null });
  const made: AttemptRecord[] = [];
  for (let i = 0; i < 8; i++) made.push(attemptOf(await seedDelivery(who.teamId, id), 1, i % 4 !== 0, new Date(Date.now() - (8 - i) * 1000)));

  // Each attempt recorded and counted by three copies at once (duplicated jobs, a repeated outcome step),
  // as the attempt step does (not waiting long for a busy lock); then the maintenance sweep.
  await Promise.all(made.flatMap((a) => [recordAndCount(a, false), recordAndCount({ ...a }, false), recordAndCount({ ...a }, false)]));
  await webhooks.countAttempts(id, { wait: true });

  const stats = await listed(who, id);
  expect(stats).toMatchObject({ total_deliveries: 8, failed_deliveries: 2, success_rate: 75, last_triggered_at: made[7].at.toISOString() });
  expect(await countOf('attempts', { webhook_id: id, counted: true })).toBe(8);
  // The counters live on the webhook: without the attempts the list still shows them.
  await sut.db.collection('attempts').deleteMany({ webhook_id: id });
  expect(await listed(who, id)).toMatchObject({ total_deliveries: 8, failed_deliveries: 2, success_rate: 75 });
});

test('when a crash left the last counted attempt unmarked, then counting it again adds nothing and the next attempt is added once', async () => {
  const who = identity();
  const id = await createHook(who, 'crash');
  const first = attemptOf(await seedDelivery(who.teamId, id), 1, true);
  await recordAndCount(first);
  // The crash: the webhook's update (naming the attempt) was written, the attempt's mark was not.
  expect(await webhooks.byId(id)).toMatchObject({ last_counted: [first._id] });
  await sut.db.collection<AttemptRecord>('attempts').updateOne({ _id: first._id }, { $set: { counted: false } });

  await recordAndCount(first);
  expect(await listed(who, id)).toMatchObject({ total_deliveries: 1, failed_deliveries: 0 });
  expect(await countOf('attempts', { _id: first._id, counted: true })).toBe(1);
  await sut.db.collection<AttemptRecord>('attempts').updateOne({ _id: first._id }, { $set: { counted: false } });
  // The next attempt's count marks the leftover, and adds only itself.
  const second = attemptOf(await seedDelivery(who.teamId, id), 1, false);
  await recordAndCount(second);
  await recordAndCount(first);
  expect(await listed(who, id)).toMatchObject({ total_deliveries: 2, failed_deliveries: 1, success_rate: 50 });
});

test("when more than a batch of a webhook's attempts wait uncounted beside another webhook's, then one count adds each of its own once, marks each batch with one update, and leaves the other's uncounted", async () => {
  const who = identity();
  const id = await createHook(who, 'batches');
  const other = await createHook(who, 'batches-other');
  const watched = await watchStore(sut.db.databaseName);
  try {
    const hooks = new WebhooksRepository(watched.db);
    // 250: a batch of 200 and one of 50; every fifth failed.
    const mine = [];
    for (let i = 0; i < 250; i++) mine.push(attemptOf(await seedDelivery(who.teamId, id), 1, i % 5 !== 0));
    const theirs = attemptOf(await seedDelivery(who.teamId, other), 1, true);
    for (const a of [...mine, theirs]) await deliveries.recordAttempt(a);
    watched.take();

    expect(await hooks.countAttempts(id, { wait: true })).toBe(250);

    const marks = watched.take().filter((q) => q.op === 'update' && q.collection === 'attempts');
    expect(marks).toHaveLength(2);
    // The equalities FerretDB pushes down to SQL (the `counted`, `webhook_id` index).
    for (const q of marks) expect([equalityOn(q, 'counted'), equalityOn(q, 'webhook_id')]).toEqual([true, true]);
    expect(await listed(who, id)).toMatchObject({ total_deliveries: 250, failed_deliveries: 50 });
    expect(await countOf('attempts', { webhook_id: id, counted: true })).toBe(250);
    expect(await countOf('attempts', { _id: theirs._id, counted: false })).toBe(1);
    // Counting again adds nothing.
    expect(await hooks.countAttempts(id, { wait: true })).toBe(0);
    expect(await listed(who, id)).toMatchObject({ total_deliveries: 250, failed_deliveries: 50 });
  } finally {
    await watched.close();
  }
});

test('when fewer attempts than a batch are uncounted, then a count reads them once and leaves what is recorded after that read to the next count', async () => {
  const who = identity();
  const id = await createHook(who, 'one-read');
  const watched = await watchStore(sut.db.databaseName);
  try {
    const hooks = new WebhooksRepository(watched.db);
    for (let i = 0; i < 3; i++) await deliveries.recordAttempt(attemptOf(await seedDelivery(who.teamId, id), 1, i !== 0));
    watched.take();

    expect(await hooks.countAttempts(id, { wait: true })).toBe(3);

    const ops = watched.take().filter((q) => q.collection === 'attempts');
    expect(ops.map((q) => q.op)).toEqual(['find', 'update']);
    expect(await listed(who, id)).toMatchObject({ total_deliveries: 3, failed_deliveries: 1 });
    // Recorded after that count: the next one counts it.
    await deliveries.recordAttempt(attemptOf(await seedDelivery(who.teamId, id), 1, true));
    expect(await hooks.countAttempts(id, { wait: true })).toBe(1);
    expect(await listed(who, id)).toMatchObject({ total_deliveries: 4, failed_deliveries: 1 });
  } finally {
    await watched.close();
  }
});

test('when a webhook stored before the counters has attempts, then the list counts them as before and keeps the counters on the webhook', async () => {
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
  await webhooks.insertWithin(legacy, 25);
  const at = new Date(Date.now() - 5000);
  for (const ok of [true, false, true]) {
    // Stored as before: no `counted` field.
    await sut.db.collection<AttemptRecord>('attempts').insertOne(attemptOf(await seedDelivery(who.teamId, legacy._id), 1, ok, at));
  }

  expect(await listed(who, legacy._id)).toMatchObject({ total_deliveries: 3, failed_deliveries: 1, success_rate: 66.7, last_triggered_at: at.toISOString() });
  expect(await webhooks.byId(legacy._id)).toMatchObject({ total_deliveries: 3, failed_deliveries: 1, last_triggered_at: at });
  await recordAndCount(attemptOf(await seedDelivery(who.teamId, legacy._id), 1, true));
  expect(await listed(who, legacy._id)).toMatchObject({ total_deliveries: 4, failed_deliveries: 1, success_rate: 75 });
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

  const purged = await purgeHistory({ webhooks, deliveries, retentionMs: RETENTION_MS });

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
  expect(await purgeHistory({ webhooks, deliveries, retentionMs: RETENTION_MS })).toMatchObject({ deliveries: 0, attempts: 0, orphanDeliveries: 0, orphanAttempts: 0 });
});

test('when retention runs past its first days, then every delete names a day marker or a deleted webhook, and what passed the cutoff since is gone while the rest stays', async () => {
  // A database of its own, and instants of its own: the sweeps' cursors start here.
  const watched = await watchStore(`${sut.db.databaseName}_markers`);
  try {
    const hooks = new WebhooksRepository(watched.db);
    const repo = new DeliveriesRepository(watched.db, { attemptClaimMs: 60_000 });
    const deps = { webhooks: hooks, deliveries: repo, retentionMs: RETENTION_MS };
    const seed = async (webhookId: string, at: Date) => {
      const d = await repo.insertOrGet({ ...(await seedDelivery('team_x', webhookId, at)), _id: newId('dlv') });
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
