// Queued attempts in process, over the run's store and broker (webhooks-attempts-suite.ts):
// a queued attempt is claimed before it is sent, so copies of one attempt job running
// at once make one POST; a claim whose holder died runs out; an attempt a dead copy
// recorded is finished without a second POST; the safety net's job of an attempt in
// flight is put off, and stale jobs after its success are dropped; a deactivated
// webhook's alert (real SMTP listener) and the logs show only scheme and host; a first
// attempt a crash left unmade is made by the rescue. The fan-out:
// webhooks-fan-out.test.ts; slots: webhooks-slots.test.ts.
import type { ConsumerHandle } from '@lpm/shared/messaging/broker';
import { startHttpsReceiver } from '@lpm/test-kit/https-receiver';
import { waitFor } from '@lpm/test-kit/wait';
import type { DeliveryRecord } from '../src/data/webhook-entity.ts';
import { attemptClaimMs, type AttemptJob } from '../src/domain/deliveries.ts';
import { newDelivery } from '../src/domain/delivery-records.ts';
import { UrlGuard } from '../src/upstream/url-guard.ts';
import { WebhookSender } from '../src/upstream/webhook-sender.ts';
import { equalityOn, watchStore } from './store-commands.ts';
import {
  attemptsSuite,
  build,
  claimsOf,
  clientCreated,
  CLAIMED_DEFER_MS,
  db,
  deliver,
  log,
  messages,
  owner,
  postsTo,
  receiver,
  SEND_TIMEOUT_MS,
  smtp,
  subscribe,
} from './webhooks-attempts-suite.ts';

attemptsSuite('attempts');

test('when two copies of one attempt job run at once, then exactly one POST reaches the receiver and the other copy is put off', async () => {
  const s = build({ queueName: 'webhooks.attempts.twice' });
  const hook = await subscribe(s, `${receiver.url}/twice`);
  const { delivery, job } = await deliver(s, hook);

  await Promise.all([s.deliveries.attempt(job), s.deliveries.attempt({ ...job })]);

  expect(postsTo(receiver, '/twice')).toHaveLength(1);
  expect(await s.deliveriesRepo.get(delivery._id)).toMatchObject({ status: 'succeeded', attempts_count: 1 });
  expect(
    await s.deliveriesRepo.attempts.attemptsOf(hook._id, [(await s.deliveriesRepo.get(delivery._id))!]),
  ).toHaveLength(1);
  // The losing copy was not dropped blindly: it comes back later (and then finds the attempt made).
  expect(await messages(`${s.queue.queue}.delay.${CLAIMED_DEFER_MS}`)).toBe(1);
  await s.deliveries.attempt(job);
  expect(postsTo(receiver, '/twice')).toHaveLength(1);
  // Claims are given up once the outcome is stored.
  expect(await claimsOf(delivery._id)).toEqual([]);
});

test('when five copies of one attempt job run at once, then exactly one POST reaches the receiver', async () => {
  const s = build({ queueName: 'webhooks.attempts.five' });
  const hook = await subscribe(s, `${receiver.url}/five`);
  const { delivery, job } = await deliver(s, hook);

  await Promise.all(Array.from({ length: 5 }, () => s.deliveries.attempt({ ...job })));

  expect(postsTo(receiver, '/five')).toHaveLength(1);
  expect(await s.deliveriesRepo.get(delivery._id)).toMatchObject({ status: 'succeeded', attempts_count: 1 });
});

test('when the holder of an attempt died with its claim, then copies are put off while the claim holds and one sends once it has run out', async () => {
  // A short claim (1.5 s) for the test; the service's is the send timeout plus 15 s.
  const claimMs = attemptClaimMs(SEND_TIMEOUT_MS, 500);
  const s = build({ claimMs, queueName: 'webhooks.attempts.dead-holder' });
  const hook = await subscribe(s, `${receiver.url}/dead-holder`);
  const { delivery, job } = await deliver(s, hook);
  // A process that claimed the attempt and was killed before it sent anything.
  const dead = await s.deliveriesRepo.claims.claimAttempt(delivery._id, 1);
  expect(dead).not.toBeNull();

  await s.deliveries.attempt(job);
  expect(postsTo(receiver, '/dead-holder')).toHaveLength(0);
  expect(await s.deliveriesRepo.get(delivery._id)).toMatchObject({ status: 'pending', attempts_count: 0 });

  const wait = dead!.exclusiveUntil - Date.now();
  expect(wait).toBeLessThanOrEqual(2 * claimMs);
  await new Promise((r) => setTimeout(r, Math.max(0, wait) + 50));
  await s.deliveries.attempt(job);
  expect(postsTo(receiver, '/dead-holder')).toHaveLength(1);
  expect(await s.deliveriesRepo.get(delivery._id)).toMatchObject({ status: 'succeeded', attempts_count: 1 });

  // The maintenance job drops what the dead holder left, once its slots are over.
  await new Promise((r) => setTimeout(r, claimMs + 50));
  expect(await s.deliveriesRepo.claims.dropExpiredClaims()).toBeGreaterThanOrEqual(2);
  expect(await claimsOf(delivery._id)).toEqual([]);
});

test("when a claim's second slot is held by another copy, then the claim is refused and only its own first slot is given back", async () => {
  const claimMs = attemptClaimMs(SEND_TIMEOUT_MS);
  const s = build({ claimMs, queueName: 'webhooks.attempts.half-claim' });
  const hook = await subscribe(s, `${receiver.url}/half-claim`);
  const { delivery } = await deliver(s, hook);
  // Another copy's slots just after this one's first (two, in case a slot boundary passes meanwhile).
  const slot = Math.floor(Date.now() / claimMs);
  const theirs = [slot + 1, slot + 2].map((n) => ({
    _id: `${delivery._id}:1:${n}`,
    owner: 'another-copy',
    expires_at: new Date((n + 1) * claimMs),
    slot: n,
  }));
  await db.collection<(typeof theirs)[number]>('attempt_claims').insertMany(theirs);

  expect(await s.deliveriesRepo.claims.claimAttempt(delivery._id, 1)).toBeNull();

  expect((await claimsOf(delivery._id)).map((c) => c._id).sort()).toEqual(theirs.map((c) => c._id).sort());
});

test('when a copy died after recording its attempt but before the delivery outcome, then the next copy finishes from the record without a second POST', async () => {
  const s = build({ queueName: 'webhooks.attempts.recorded' });
  const hook = await subscribe(s, `${receiver.url}/recorded`);
  const { delivery, job } = await deliver(s, hook);
  const at = new Date(Date.now() - 1000);
  await s.deliveriesRepo.attempts.recordAttempt({
    _id: `${delivery._id}:1`,
    team_id: hook.team_id,
    webhook_id: hook._id,
    delivery_id: delivery._id,
    attempt: 1,
    at,
    ok: true,
    status_code: 200,
    latency_ms: 12,
    error_class: null,
    response_body: 'ok',
  });

  await s.deliveries.attempt(job);

  expect(postsTo(receiver, '/recorded')).toHaveLength(0);
  expect(await s.deliveriesRepo.get(delivery._id)).toMatchObject({
    status: 'succeeded',
    attempts_count: 1,
    last_attempt_at: at,
  });
});

test('when the safety net re-queues an attempt whose POST is in flight, and stale jobs come after its success, then the receiver gets one POST', async () => {
  const GRACE_MS = 10 * 60_000;
  // A database of its own: the safety net visits every overdue delivery. A receiver that answers when let.
  const watched = await watchStore(`${db.databaseName}_stale`);
  let answer = () => {};
  const answered = new Promise<void>((r) => (answer = r));
  const gated = await startHttpsReceiver(async () => {
    await answered;
    return { status: 200 };
  });
  const sender = new WebhookSender({ guard: new UrlGuard({ allowPrivate: true }), timeoutMs: 10_000 });
  let consumer: ConsumerHandle | undefined;
  try {
    const s = build({ queueName: 'webhooks.attempts.stale', store: watched.db, sender, sendTimeoutMs: 10_000 });
    const hook = await subscribe(s, `${gated.url}/stale`);
    const { delivery, job } = await deliver(s, hook);
    const handled: AttemptJob[] = [];
    consumer = await s.queue.consume(async (j) => {
      await s.deliveries.attempt(j);
      handled.push(j);
    });
    const first = s.deliveries.attempt(job);
    await waitFor('the POST', () => gated.requests.length === 1);

    // The delivery looks stuck: its job, queued again, finds the attempt claimed and is put off.
    expect(await s.deliveries.requeueStuck(GRACE_MS, new Date(Date.now() + GRACE_MS + 60_000))).toBe(1);
    await waitFor('the requeued job', () => handled.length === 1);
    expect(s.pushed).toEqual([{ job }, { job, delayMs: CLAIMED_DEFER_MS }]);
    answer();
    await first;
    expect(await s.deliveriesRepo.get(delivery._id)).toMatchObject({ status: 'succeeded', attempts_count: 1 });

    // Stale jobs of the attempt made and of the next one, and the put-off copy coming back: none is sent.
    await s.queue.push({ ...job });
    await s.queue.push({ ...job, attempt: 2 });
    await waitFor('the stale jobs and the put-off copy', () => handled.length === 4, CLAIMED_DEFER_MS + 10_000);
    expect(gated.requests).toHaveLength(1);
    expect(await s.deliveriesRepo.get(delivery._id)).toMatchObject({ status: 'succeeded', attempts_count: 1 });
    expect(s.pushed).toHaveLength(2);
    expect(await claimsOf(delivery._id, watched.db)).toEqual([]);
  } finally {
    answer();
    await consumer?.cancel();
    await sender.close();
    await gated.close();
    await watched.db.dropDatabase();
    await watched.close();
  }
}, 60_000);

test('when a webhook whose URL carries a path and a token is deactivated, then the alert e-mail and the logs show only its scheme and host', async () => {
  const failing = await startHttpsReceiver(() => ({ status: 500, body: 'down' }));
  try {
    const s = build({ queueName: 'webhooks.attempts.alert' });
    const hook = await subscribe(s, `${failing.url}/hooks/pr1vate-path?token=s3cret-t0ken`);
    // Six deliveries failing once each (no retries configured here): six failures in a row.
    for (let i = 0; i < 6; i++) {
      const { job } = await deliver(s, hook);
      await s.deliveries.attempt(job);
    }
    expect(failing.requests).toHaveLength(6);
    await s.fold();
    const [mail] = await smtp.waitFor(1, 10_000);
    expect(mail.to).toEqual([owner.email]);
    expect(mail.subject).toBe(`Webhook deactivated: ${failing.url}`);
    expect(mail.text).toContain(`The webhook ${hook._id} (${failing.url}) failed 6 delivery attempts`);
    for (const secret of ['pr1vate-path', 's3cret-t0ken', '/hooks/']) {
      expect(mail.raw).not.toContain(secret);
      expect(JSON.stringify(log.lines)).not.toContain(secret);
    }
    expect(log.lines).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          level: 'info',
          msg: 'webhook deactivated after consecutive failures',
          obj: expect.objectContaining({ url: failing.url }),
        }),
        expect.objectContaining({
          level: 'info',
          msg: 'mail sent',
          obj: expect.objectContaining({ subject: `Webhook deactivated: ${failing.url}` }),
        }),
      ]),
    );
  } finally {
    await failing.close();
  }
});

test("when a stored delivery's first attempt never happened, then the rescue finds it (by range on its first run, by its due minute after that) and it is delivered", async () => {
  const GRACE_MS = 10 * 60_000;
  // A database of its own: no other test's pending deliveries.
  const watched = await watchStore(`${db.databaseName}_rescue`);
  let consumer: ConsumerHandle | undefined;
  try {
    const s = build({ queueName: 'webhooks.attempts.rescued', store: watched.db });
    const hook = await subscribe(s, `${receiver.url}/rescued`);
    // A delivery stored before the marker existed: the first rescue reads by range, finds it, and stores its cursor.
    const first = Date.now();
    const legacy = newDelivery(clientCreated(hook.team_id), hook._id, new Date(first - 2 * GRACE_MS));
    await watched.db.collection<DeliveryRecord>('deliveries').insertOne(legacy);
    expect(await s.deliveries.requeueStuck(GRACE_MS, new Date(first))).toBe(1);
    consumer = await s.queue.consume((job) => s.deliveries.attempt(job));
    await waitFor('the legacy attempt', () => postsTo(receiver, '/rescued').length === 1);
    await waitFor('its outcome', async () => (await s.deliveriesRepo.get(legacy._id))?.status === 'succeeded');
    await consumer.cancel();
    consumer = undefined;
    // A delivery the fan-out stored (due a minute later) and whose event was then dead-lettered: no job for it anywhere.
    const lost = newDelivery(clientCreated(hook.team_id), hook._id, new Date(first + 60_000));
    await s.deliveriesRepo.insert(lost);
    watched.take();

    expect(await s.deliveries.requeueStuck(GRACE_MS, new Date(first + GRACE_MS + 5 * 60_000))).toBe(1);

    const reads = watched.take().filter((q) => q.collection === 'deliveries' && q.op === 'find');
    expect(reads.length).toBeGreaterThan(0);
    expect(
      reads.every((q) => equalityOn(q, 'due_minute') && equalityOn(q, 'status') && !('next_attempt_at' in q.filter)),
    ).toBe(true);
    consumer = await s.queue.consume((job) => s.deliveries.attempt(job));
    await waitFor('the rescued attempt', () => postsTo(receiver, '/rescued').length === 2);
    await waitFor('its outcome', async () => (await s.deliveriesRepo.get(lost._id))?.status === 'succeeded');
    // The delivery log counts a delivery by its first attempt's tally: the one stored with its markers, not the one stored before them (the log's backfill counts that one).
    const tallies = await watched.db
      .collection<{ _id: string; logged?: Date }>('attempt_tallies')
      .find({ webhook_id: hook._id })
      .toArray();
    expect(tallies.find((t) => t._id === `${lost._id}:1`)).toMatchObject({ logged: lost.created_at });
    expect(tallies.find((t) => t._id === `${legacy._id}:1`)).not.toHaveProperty('logged');
  } finally {
    await consumer?.cancel();
    await watched.db.dropDatabase();
    await watched.close();
  }
});
