// Retention: deleting a webhook removes its history; retention (HistoryRetention)
// drops old deliveries and attempts, orphans of deleted webhooks, and Idempotency-Key
// records past 24 h; once past its first days it deletes by day markers and tombstones only
// (what FerretDB pushes down to SQL). The app in process on its own database
// (webhooks-retention-suite.ts); old records are seeded through the repositories.
import { newId } from '@lpm/shared/ids';
import { DAY_MS } from '@lpm/shared/time';
import { CountersRepository } from '../src/data/counters-repository.ts';
import { DeliveriesRepository } from '../src/data/deliveries-repository.ts';
import type { AttemptRecord, DeliveryRecord } from '../src/data/webhook-entity.ts';
import { WebhooksRepository } from '../src/data/webhooks-repository.ts';
import { HistoryRetention, type HistoryRetentionOptions } from '../src/domain/history-retention.ts';
import { identity } from '@lpm/test-kit/teams';
import { equalityOn, watchStore } from './store-commands.ts';
import {
  attemptOf,
  counters,
  countOf,
  createHook,
  deliveries,
  deliveryOf,
  listed,
  newTeamHook,
  recordAndCount,
  RETENTION_MS,
  retentionSuite,
  seedDelivery,
  sut,
  webhooks,
} from './webhooks-retention-suite.ts';

retentionSuite();

test('when a webhook is deleted, then none of its deliveries, attempts or attempt claims remain, and another webhook keeps its history', async () => {
  const who = identity();
  const doomed = await createHook(who, 'doomed');
  const kept = await createHook(who, 'kept');
  for (const id of [doomed, kept]) {
    const d = await seedDelivery(who.teamId, id);
    await recordAndCount(attemptOf(d, 1, false));
    await recordAndCount(attemptOf(d, 2, true));
    expect(await deliveries.claims.claimAttempt(d._id, 3)).not.toBeNull();
  }
  const doomedDeliveries = (
    await sut.db.collection<DeliveryRecord>('deliveries').find({ webhook_id: doomed }).toArray()
  ).map((d) => d._id);

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

test('when the retention job runs, then deliveries and attempts past retention, and orphans of deleted webhooks are gone, and the rest stays', async () => {
  const { who, id } = await newTeamHook('retained');
  const longAgo = new Date(Date.now() - RETENTION_MS - DAY_MS);
  const old = await seedDelivery(who.teamId, id, longAgo);
  await recordAndCount(attemptOf(old, 1, true, longAgo));
  const recent = await seedDelivery(who.teamId, id, new Date(Date.now() - DAY_MS));
  await recordAndCount(attemptOf(recent, 1, true, new Date(Date.now() - DAY_MS)));
  // A deleted webhook's history left by a crash, and the history of one created a moment ago (not an orphan).
  const gone = newId('wh');
  const orphan = await seedDelivery(who.teamId, gone, new Date(Date.now() - 3600_000));
  await sut.db
    .collection<AttemptRecord>('attempts')
    .insertOne(attemptOf(orphan, 1, false, new Date(Date.now() - 3600_000)));
  const justNow = await seedDelivery(who.teamId, newId('wh'));

  const purged = await new HistoryRetention({ webhooks, deliveries, counters, retentionMs: RETENTION_MS }).purge();

  expect(purged).toMatchObject({ deliveries: 1, attempts: 1, orphanDeliveries: 1, orphanAttempts: 1 });
  expect(await deliveries.get(old._id)).toBeNull();
  expect(await deliveries.attempts.attemptById(`${old._id}:1`)).toBeNull();
  expect(await deliveries.get(orphan._id)).toBeNull();
  expect(await deliveries.attempts.attemptById(`${orphan._id}:1`)).toBeNull();
  expect(await deliveries.get(recent._id)).not.toBeNull();
  expect(await deliveries.attempts.attemptById(`${recent._id}:1`)).not.toBeNull();
  expect(await deliveries.get(justNow._id)).not.toBeNull();
  // The counters keep what was counted; a second run finds nothing more.
  expect(await listed(who, id)).toMatchObject({ total_deliveries: 2 });
  expect(
    await new HistoryRetention({ webhooks, deliveries, counters, retentionMs: RETENTION_MS }).purge(),
  ).toMatchObject({
    deliveries: 0,
    attempts: 0,
    orphanDeliveries: 0,
    orphanAttempts: 0,
  });
});

test('when retention runs past its first days, then every delete names a day marker or a deleted webhook, and what passed the cutoff since is gone while the rest stays', async () => {
  // A database of its own, and instants of its own: the sweeps' cursors start here.
  const watched = await watchStore(`${sut.db.databaseName}_markers`);
  try {
    const hooks = new WebhooksRepository(watched.db);
    const repo = new DeliveriesRepository(watched.db, { attemptClaimMs: 60_000 });
    const deps: HistoryRetentionOptions = {
      webhooks: hooks,
      deliveries: repo,
      counters: new CountersRepository(watched.db),
      retentionMs: RETENTION_MS,
    };
    const seed = async (webhookId: string, at: Date) => {
      const d = deliveryOf('team_x', webhookId, at);
      await repo.insert(d);
      await repo.attempts.recordAttempt(attemptOf(d, 1, true, at));
      return d;
    };
    // The first run deletes by range (records without markers are gone then) and stores the cursors.
    const first = Date.now();
    await new HistoryRetention(deps).purge(new Date(first));
    // Three days without a run: they are caught up day by day.
    const now = first + 3 * DAY_MS;
    const cutoff = now - RETENTION_MS;
    const hook = newId('wh');
    const dayBefore = await seed(hook, new Date(cutoff - DAY_MS));
    const hourBefore = await seed(hook, new Date(cutoff - 3600_000));
    const hourAfter = await seed(hook, new Date(cutoff + 3600_000));
    // Stored long before the cutoff, last changed after it: kept.
    const retried = await seed(hook, new Date(cutoff - 2 * DAY_MS));
    await repo.recordOutcome(retried._id, {
      status: 'succeeded',
      attempts_count: 2,
      last_attempt_at: new Date(cutoff + 60_000),
      next_attempt_at: null,
    });
    // History left by a webhook's delete (its tombstone written, the webhook gone) whose process died before dropping it.
    const deleted = newId('wh');
    const left = await seed(deleted, new Date(cutoff + DAY_MS));
    await hooks.remove('team_x', deleted);
    watched.take();

    const purged = await new HistoryRetention(deps).purge(new Date(now));

    expect(purged).toMatchObject({ deliveries: 2, attempts: 3, orphanDeliveries: 1, orphanAttempts: 1 });
    for (const gone of [dayBefore, hourBefore, left]) expect(await repo.get(gone._id)).toBeNull();
    for (const kept of [hourAfter, retried]) expect(await repo.get(kept._id)).not.toBeNull();
    expect(await repo.attempts.attemptById(`${hourAfter._id}:1`)).not.toBeNull();
    const deletes = watched
      .take()
      .filter((q) => q.op === 'delete' && ['deliveries', 'attempts'].includes(q.collection));
    expect(deletes.length).toBeGreaterThan(0);
    for (const q of deletes)
      expect([q, ['day', 'updated_day', 'webhook_id'].some((f) => equalityOn(q, f))]).toEqual([q, true]);
  } finally {
    await watched.db.dropDatabase();
    await watched.close();
  }
});
