// A webhook's slots in process (webhooks-attempts-suite.ts): events beyond them wait in
// the fan-out while the receiver answers, and a receiver that hangs holds only its
// webhook's slots, its further events going the queued way.
import type { ConsumerHandle } from '@lpm/shared/messaging/broker';
import { newId } from '@lpm/shared/ids';
import { startHttpsReceiver, type HttpsReceiver } from '@lpm/test-kit/https-receiver';
import { waitFor } from '@lpm/test-kit/wait';
import { UrlGuard } from '../src/upstream/url-guard.ts';
import { WebhookSender } from '../src/upstream/webhook-sender.ts';
import {
  attemptsSuite,
  build,
  clientCreated,
  db,
  PER_WEBHOOK,
  postsTo,
  receiver,
  subscribe,
} from './webhooks-attempts-suite.ts';

attemptsSuite('slots');

test('when more events for one answering webhook come at once than it has slots, then the later ones wait for a slot in the fan-out and none goes through the attempts queue', async () => {
  const s = build({ queueName: 'webhooks.attempts.slot-wait' });
  const hook = await subscribe(s, `${receiver.url}/slot-wait`);
  // Twice its slots, against a receiver that answers after 300 ms: half of them wait for a slot.
  const events = Array.from({ length: 2 * PER_WEBHOOK }, () => clientCreated(hook.team_id));
  await Promise.all(events.map((e) => s.deliveries.fanOut(e, true)));
  expect(postsTo(receiver, '/slot-wait')).toHaveLength(events.length);
  expect(s.pushed).toEqual([]);
  expect(await db.collection('deliveries').countDocuments({ webhook_id: hook._id, status: 'succeeded' })).toBe(
    events.length,
  );
});

test("when one webhook's receiver hangs beside one that answers at once, then the fast one gets every event while the hanging one holds only its slots, and both get every event", async () => {
  let answer: () => void = () => {};
  const answered = new Promise<void>((r) => (answer = r));
  const fast = await startHttpsReceiver();
  const hanging = await startHttpsReceiver(async () => {
    await answered;
    return { status: 200 };
  });
  let consumer: ConsumerHandle | undefined;
  // Long enough that no hanging POST ends before the test answers them.
  const patient = new WebhookSender({ guard: new UrlGuard({ allowPrivate: true }), timeoutMs: 60_000 });
  try {
    const s = build({ queueName: 'webhooks.attempts.fair', sender: patient, sendTimeoutMs: 60_000 });
    consumer = await s.queue.consume((job) => s.deliveries.attempt(job), { prefetch: 32 });
    const team = newId('team');
    const quick = await subscribe(s, `${fast.url}/quick`, team);
    const stuck = await subscribe(s, `${hanging.url}/stuck`, team);
    const events = Array.from({ length: 3 * PER_WEBHOOK }, () => clientCreated(team));
    const distinct = (r: HttpsReceiver) => new Set(r.requests.map((q) => JSON.parse(q.body).id)).size;

    const fanning = Promise.all(events.map((e) => s.deliveries.fanOut(e, true)));
    await waitFor('every event at the fast receiver', () => distinct(fast) === events.length, 60_000);
    // Not one hanging POST has been answered yet, and they take no more than the webhook's slots.
    expect(hanging.requests.length).toBeGreaterThan(0);
    expect(hanging.requests.length).toBeLessThanOrEqual(PER_WEBHOOK);
    expect(await db.collection('attempts').countDocuments({ webhook_id: stuck._id })).toBe(0);

    answer();
    await fanning;
    await waitFor(
      'every event at the hanging receiver once it answers',
      () => distinct(hanging) === events.length,
      60_000,
    );
    for (const hook of [quick, stuck]) {
      await waitFor(
        'every delivery succeeded',
        async () =>
          (await db.collection('deliveries').countDocuments({ webhook_id: hook._id, status: 'succeeded' })) ===
          events.length,
      );
    }
  } finally {
    answer();
    await consumer?.cancel();
    await patient.close();
    await fast.close();
    await hanging.close();
  }
});

test("when a webhook's receiver hangs, then the events beyond its slots stop waiting for them once its POSTs have hung past a second, and go the queued way", async () => {
  // Before, they waited for a slot until the first POST ended (a whole timeout), holding
  // their events, and with a full prefetch window every other webhook's deliveries.
  let answer: () => void = () => {};
  const answered = new Promise<void>((r) => (answer = r));
  const hanging = await startHttpsReceiver(async () => {
    await answered;
    return { status: 200 };
  });
  const patient = new WebhookSender({ guard: new UrlGuard({ allowPrivate: true }), timeoutMs: 60_000 });
  try {
    const s = build({ queueName: 'webhooks.attempts.hung', sender: patient, sendTimeoutMs: 60_000 });
    const team = newId('team');
    const stuck = await subscribe(s, `${hanging.url}/hung`, team);
    const events = Array.from({ length: 2 * PER_WEBHOOK }, () => clientCreated(team));
    let settled = 0;
    const fanning = Promise.all(events.map((e) => s.deliveries.fanOut(e, true).finally(() => settled++)));
    // Well past SLOW_POST_MS and its checks, well short of the 30 s an answering webhook's attempts may wait.
    await waitFor('the events beyond its slots done', () => settled === PER_WEBHOOK, 10_000);
    expect(hanging.requests.length).toBe(PER_WEBHOOK);
    expect(s.pushed.filter((p) => p.job.webhook_id === stuck._id && p.job.attempt === 1)).toHaveLength(PER_WEBHOOK);
    expect(await db.collection('deliveries').countDocuments({ webhook_id: stuck._id, status: 'pending' })).toBe(
      PER_WEBHOOK,
    );
    answer();
    await fanning;
    expect(await db.collection('deliveries').countDocuments({ webhook_id: stuck._id, status: 'succeeded' })).toBe(
      PER_WEBHOOK,
    );
  } finally {
    answer();
    await patient.close();
    await hanging.close();
  }
});
