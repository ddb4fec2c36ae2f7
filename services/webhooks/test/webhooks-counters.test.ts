// Growth: the list's counters are kept apart (webhook_counters), each attempt added
// once by a fold, and the list reads no attempts; failures in a row are kept on the
// counters too, whatever order the attempts come in. The app in process on its own database
// (webhooks-retention-suite.ts); attempts are seeded through the repositories.
import { newId } from '@lpm/shared/ids';
import { CountersRepository } from '../src/data/counters-repository.ts';
import type { AttemptRecord, DeliveryRecord, WebhookCountersRecord } from '../src/data/webhook-entity.ts';
import { identity } from '@lpm/test-kit/teams';
import { equalityOn, watchStore } from './store-commands.ts';
import {
  attemptOf,
  attemptOfNewDelivery,
  counters,
  countOf,
  createHook,
  deliveries,
  listed,
  newTeamHook,
  recordAndCount,
  retentionSuite,
  sut,
} from './webhooks-retention-suite.ts';

retentionSuite();

test('when attempts are recorded, some by several copies at once, then a fold counts each once, and the list shows them without reading an attempt', async () => {
  const { who, id } = await newTeamHook('counted');
  expect(await listed(who, id)).toMatchObject({
    total_deliveries: 0,
    failed_deliveries: 0,
    success_rate: 100,
    last_triggered_at: null,
  });
  const made: AttemptRecord[] = [];
  for (let i = 0; i < 8; i++)
    made.push(await attemptOfNewDelivery(who.teamId, id, i % 4 !== 0, new Date(Date.now() - (8 - i) * 1000)));

  // Each attempt recorded by three copies at once (duplicated jobs, a repeated outcome step).
  const recorded = await Promise.all(
    made.flatMap((a) => [
      deliveries.attempts.recordAttempt(a),
      deliveries.attempts.recordAttempt({ ...a }),
      deliveries.attempts.recordAttempt({ ...a }),
    ]),
  );
  expect(recorded.map((a) => a._id)).toEqual(made.flatMap((a) => [a._id, a._id, a._id]));
  // Not counted until a fold: the counters live apart from the send path.
  expect(await listed(who, id)).toMatchObject({ total_deliveries: 0 });
  expect(await counters.fold()).toBeGreaterThanOrEqual(8);

  const stats = await listed(who, id);
  expect(stats).toMatchObject({
    total_deliveries: 8,
    failed_deliveries: 2,
    success_rate: 75,
    last_triggered_at: made[7].at.toISOString(),
  });
  expect(await countOf('attempt_tallies', { webhook_id: id })).toBe(0);
  // The counters are kept: without the attempts the list still shows them.
  await sut.db.collection('attempts').deleteMany({ webhook_id: id });
  expect(await listed(who, id)).toMatchObject({ total_deliveries: 8, failed_deliveries: 2, success_rate: 75 });
});

test('when two replicas fold at the same moment, then each attempt is counted once', async () => {
  const { who, id } = await newTeamHook('two-folds');
  for (let i = 0; i < 20; i++)
    await deliveries.attempts.recordAttempt(await attemptOfNewDelivery(who.teamId, id, i % 2 === 0));
  const replica = new CountersRepository(sut.db);

  await Promise.all([counters.fold(), replica.fold(), counters.fold()]);
  await counters.fold();

  expect(await listed(who, id)).toMatchObject({ total_deliveries: 20, failed_deliveries: 10 });
});

test('when a crash left the tally of the last fold of a webhook undeleted, then folding again adds nothing and the next attempt is added once', async () => {
  const { who, id } = await newTeamHook('crash');
  const first = await attemptOfNewDelivery(who.teamId, id, true);
  await recordAndCount(first);
  // The crash: the counters' update (naming the attempt) was written, the tally's delete was not.
  expect(await sut.db.collection<WebhookCountersRecord>('webhook_counters').findOne({ _id: id })).toMatchObject({
    last_counted: [first._id],
  });
  const tally = { _id: first._id, webhook_id: id, ok: true, at: first.at };
  await sut.db.collection<typeof tally>('attempt_tallies').insertOne(tally);

  expect(await counters.fold()).toBe(0);
  expect(await listed(who, id)).toMatchObject({ total_deliveries: 1, failed_deliveries: 0 });
  expect(await countOf('attempt_tallies', { _id: first._id })).toBe(0);
  await sut.db.collection<typeof tally>('attempt_tallies').insertOne(tally);
  // The next fold deletes the leftover, and adds only the new attempt.
  await recordAndCount(await attemptOfNewDelivery(who.teamId, id, false));
  expect(await listed(who, id)).toMatchObject({ total_deliveries: 2, failed_deliveries: 1, success_rate: 50 });
  expect(await countOf('attempt_tallies', { webhook_id: id })).toBe(0);
});

test('when more than a batch of attempts of several webhooks wait uncounted, then one fold adds each once with a few commands a batch', async () => {
  const who = identity();
  const ids = [
    await createHook(who, 'batches-a'),
    await createHook(who, 'batches-b'),
    await createHook(who, 'batches-c'),
  ];
  // Uncounted attempts of other tests' webhooks would join the fold: fold them first.
  await counters.fold();
  const watched = await watchStore(sut.db.databaseName);
  try {
    const fold = new CountersRepository(watched.db);
    // 2,100 attempts (a batch of 2,000 and one of 100), round robin over the three webhooks; every fifth failed.
    const seeded: AttemptRecord[] = [];
    for (let i = 0; i < 2100; i++) {
      const webhookId = ids[i % 3];
      const deliveryId = newId('dlv');
      seeded.push(
        attemptOf({ _id: deliveryId, team_id: who.teamId, webhook_id: webhookId } as DeliveryRecord, 1, i % 5 !== 0),
      );
    }
    await Promise.all(seeded.map((a) => deliveries.attempts.recordAttempt(a)));
    watched.take();

    const folds = [await fold.fold()];
    // A fold keeps within half its lock's time: on a loaded machine the first may stop after its first batch; the next goes on.
    if (folds[0] < 2100) folds.push(await fold.fold());
    expect(folds.reduce((a, b) => a + b)).toBe(2100);

    const sent = watched.take();
    // The fold reads the tallies only, never the attempts.
    expect(sent.filter((q) => q.collection === 'attempts')).toEqual([]);
    // Per batch: one read of the tallies and one delete command, its statement for each webhook naming it by an
    // equality FerretDB sends to SQL (an `$in` of ids alone would read every tally); the counters: one read and an
    // update per webhook.
    const tallyOps = sent.filter((q) => q.collection === 'attempt_tallies');
    expect(tallyOps.map((q) => q.op)).toEqual([
      'find',
      'delete',
      'delete',
      'delete',
      'find',
      'delete',
      'delete',
      'delete',
    ]);
    for (const q of tallyOps.filter((t) => t.op === 'delete')) expect(equalityOn(q, 'webhook_id')).toBe(true);
    const counterWrites = sent.filter((q) => q.collection === 'webhook_counters' && q.op === 'update');
    expect(counterWrites).toHaveLength(6);
    expect(sent.length).toBeLessThan(20 * folds.length);
    for (const id of ids) {
      const mine = seeded.filter((a) => a.webhook_id === id);
      expect(await listed(who, id)).toMatchObject({
        total_deliveries: 700,
        failed_deliveries: mine.filter((a) => !a.ok).length,
      });
    }
    expect(await fold.fold()).toBe(0);
  } finally {
    await watched.close();
  }
});

test('when the attempts around a success are folded out of order, then the failures in a row are those after the newest success, since the given instant', async () => {
  const { who, id } = await newTeamHook('out-of-order');
  const since = new Date(Date.now() - 60_000);
  const at = (s: number) => new Date(since.getTime() + s * 1000);
  const foldOf = async (...made: [ok: boolean, s: number][]) => {
    for (const [ok, s] of made)
      await deliveries.attempts.recordAttempt(await attemptOfNewDelivery(who.teamId, id, ok, at(s)));
    expect(await counters.fold()).toBe(made.length);
  };

  await foldOf([false, 1], [false, 3]);
  expect(await counters.failuresInARow(id, since, 6)).toBe(2);
  // The success between them comes in a later fold: only the failure after it counts.
  await foldOf([true, 2]);
  expect(await counters.failuresInARow(id, since, 6)).toBe(1);
  // An older success changes nothing; the failures after the newest add up.
  await foldOf([true, 0], [false, 4], [false, 5]);
  expect(await counters.failuresInARow(id, since, 6)).toBe(3);
  expect(await counters.failuresInARow(id, since, 2)).toBe(2);
  // Counted from a re-activation: the failures before it left out.
  expect(await counters.failuresInARow(id, at(4.5), 6)).toBe(1);
});
