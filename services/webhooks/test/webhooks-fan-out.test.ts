// The fan-out in process (webhooks-attempts-suite.ts): it makes first attempts itself,
// without the attempts queue, a read or a claim, and stores many events' deliveries in
// a few inserts; a redelivered event sends only what no copy stored; a success kept
// inside its delivery still breaks a run of failures.
import { newId } from '@lpm/shared/ids';
import { mainQueueArguments } from '@lpm/shared/messaging/queues';
import { startHttpsReceiver } from '@lpm/test-kit/https-receiver';
import type { DeliveryRecord } from '../src/data/webhook-entity.ts';
import { newDelivery } from '../src/domain/delivery-records.ts';
import { equalityOn, watchStore } from './store-commands.ts';
import {
  attemptsSuite,
  build,
  clientCreated,
  db,
  deliveryOf,
  messages,
  postsTo,
  receiver,
  scratch,
  subscribe,
} from './webhooks-attempts-suite.ts';

attemptsSuite('fan-out');

test('when an event is fanned out, then its first attempt reaches the receiver from the fan-out itself, signed, with no job queued, and is stored inside its delivery by inserts alone', async () => {
  const watched = await watchStore(db.databaseName);
  try {
    const s = build({ queueName: 'webhooks.attempts.direct', store: watched.db });
    await scratch.ch.assertQueue(s.queue.queue, { durable: true, arguments: mainQueueArguments(s.queue.queue) });
    const hook = await subscribe(s, `${receiver.url}/direct`);
    const event = clientCreated(hook.team_id);
    watched.take();

    await s.deliveries.fanOut(event, true);

    const [post, ...more] = postsTo(receiver, '/direct');
    expect(more).toEqual([]);
    expect(JSON.parse(post.body)).toMatchObject({ id: event.id, type: 'client.created', webhook_id: hook._id });
    expect(post.headers).toMatchObject({ 'webhook-id': event.id, 'x-service-event-id': event.id });
    expect(await deliveryOf(hook, event.id)).toMatchObject({
      status: 'succeeded',
      attempts_count: 1,
      next_attempt_at: null,
      due_minute: null,
    });
    expect(await messages(s.queue.queue)).toBe(0);
    // The team's active webhooks read once, by equalities FerretDB sends to SQL (their events are matched in
    // process); then the attempt's tally and the delivery, with the attempt inside it, inserted, and nothing
    // else: no claim, no count, no update, no document of `attempts`.
    const sent = watched
      .take()
      .map((q) => (q.op === 'find' ? `find ${q.collection} ${JSON.stringify(q.filter)}` : `${q.op} ${q.collection}`));
    expect(sent).toEqual([
      `find webhooks ${JSON.stringify({ team_id: hook.team_id })}`,
      'insert attempt_tallies',
      'insert deliveries',
    ]);
    // The delivery log's markers went with the insert, and the tally counts the delivery in the log by its minute.
    const stored = (await deliveryOf(hook, event.id))!;
    expect(stored.first_attempt).toEqual({
      at: stored.last_attempt_at,
      ok: true,
      status_code: 200,
      latency_ms: expect.any(Number),
      error_class: null,
      response_body: expect.any(String),
    });
    const [attempt] = await s.deliveriesRepo.attempts.attemptsOf(hook._id, [stored]);
    expect(attempt).toMatchObject({
      _id: `${stored._id}:1`,
      delivery_id: stored._id,
      webhook_id: hook._id,
      team_id: hook.team_id,
      attempt: 1,
      ok: true,
      status_code: 200,
    });
    expect(stored.log_minute).toBe(`${hook._id}:${Math.floor(stored.created_at.getTime() / 60_000)}`);
    expect(await watched.db.collection('attempt_tallies').findOne({ _id: `${stored._id}:1` as never })).toMatchObject({
      logged: stored.created_at,
    });
  } finally {
    await watched.close();
  }
});

test('when an event comes again after a copy stored its delivery (a redelivery), then nothing is sent again; when no copy stored it (a crash before), it is sent and stored once', async () => {
  const watched = await watchStore(db.databaseName);
  try {
    const s = build({ queueName: 'webhooks.attempts.redelivered', store: watched.db });
    const hook = await subscribe(s, `${receiver.url}/redelivered`);
    const handled = clientCreated(hook.team_id);
    await s.deliveries.fanOut(handled, true);
    watched.take();

    await s.deliveries.fanOut(handled, false);

    expect(postsTo(receiver, '/redelivered')).toHaveLength(1);
    // One read of the delivery by its id (derived from the webhook and the event), an equality FerretDB sends to SQL.
    const sent = watched.take().filter((q) => q.collection === 'deliveries');
    expect(sent.map((q) => q.op)).toEqual(['find']);
    expect(equalityOn(sent[0], '_id')).toBe(true);

    // The process died after the POST and before storing anything: the event comes again and is sent again.
    const crashed = clientCreated(hook.team_id);
    await s.deliveries.fanOut(crashed, false);
    expect(postsTo(receiver, '/redelivered').filter((q) => JSON.parse(q.body).id === crashed.id)).toHaveLength(1);
    const stored = await deliveryOf(hook, crashed.id);
    expect(stored).toMatchObject({ status: 'succeeded', attempts_count: 1 });
    expect(await s.deliveriesRepo.attempts.attemptsOf(hook._id, [stored!])).toHaveLength(1);
  } finally {
    await watched.close();
  }
});

test('when a redelivered event finds its delivery stored pending its first attempt (a copy with no free slot died before queueing it), then that attempt is queued and made once', async () => {
  const s = build({ queueName: 'webhooks.attempts.unqueued' });
  const hook = await subscribe(s, `${receiver.url}/unqueued`);
  const event = clientCreated(hook.team_id);
  const pending = newDelivery(event, hook._id, new Date());
  expect(await s.deliveriesRepo.insert(pending)).toBe('inserted');

  await s.deliveries.fanOut(event, false);

  expect(postsTo(receiver, '/unqueued')).toHaveLength(0);
  expect(s.pushed).toEqual([
    { job: { delivery_id: pending._id, webhook_id: hook._id, team_id: hook.team_id, attempt: 1 }, delayMs: undefined },
  ]);
  await s.deliveries.attempt(s.pushed[0].job);
  await s.deliveries.attempt(s.pushed[0].job);
  expect(postsTo(receiver, '/unqueued')).toHaveLength(1);
  expect(await deliveryOf(hook, event.id)).toMatchObject({ _id: pending._id, status: 'succeeded', attempts_count: 1 });
});

test('when a copy of an event is fanned out on another replica at the same moment, then both may send (at least once) but one delivery with one attempt is stored', async () => {
  const s = build({ queueName: 'webhooks.attempts.copies' });
  const replica = build({ queueName: 'webhooks.attempts.copies' });
  const hook = await subscribe(s, `${receiver.url}/copies`);
  const copied = clientCreated(hook.team_id);

  await Promise.all([s.deliveries.fanOut(copied, true), replica.deliveries.fanOut(copied, true)]);

  const posts = postsTo(receiver, '/copies');
  expect(posts.length).toBeGreaterThanOrEqual(1);
  expect(new Set(posts.map((q) => JSON.parse(q.body).id))).toEqual(new Set([copied.id]));
  const stored = await db.collection<DeliveryRecord>('deliveries').find({ webhook_id: hook._id }).toArray();
  expect(stored).toHaveLength(1);
  expect(await s.deliveriesRepo.attempts.attemptsOf(hook._id, stored)).toEqual([
    expect.objectContaining({ attempt: 1, ok: true }),
  ]);
  expect(await db.collection('attempts').countDocuments({ webhook_id: hook._id })).toBe(0);
  expect([...s.pushed, ...replica.pushed]).toEqual([]);
});

test('when a fan-out finds its delivery stored pending by a copy with no free slot, then its successful attempt is recorded apart and the queued job finishes from it without a second POST', async () => {
  const s = build({ queueName: 'webhooks.attempts.pending-copy' });
  const hook = await subscribe(s, `${receiver.url}/pending-copy`);
  const event = clientCreated(hook.team_id);
  const pending = newDelivery(event, hook._id, new Date());
  expect(await s.deliveriesRepo.insert(pending)).toBe('inserted');

  await s.deliveries.fanOut(event, true);
  expect(postsTo(receiver, '/pending-copy')).toHaveLength(1);
  expect(await s.deliveriesRepo.attempts.attemptById(`${pending._id}:1`)).toMatchObject({ ok: true, attempt: 1 });

  await s.deliveries.attempt({ delivery_id: pending._id, webhook_id: hook._id, team_id: hook.team_id, attempt: 1 });
  expect(postsTo(receiver, '/pending-copy')).toHaveLength(1);
  const stored = (await s.deliveriesRepo.get(pending._id))!;
  expect(stored).toMatchObject({ status: 'succeeded', attempts_count: 1 });
  expect(stored.first_attempt).toBeUndefined();
  expect(await s.deliveriesRepo.attempts.attemptsOf(hook._id, [stored])).toEqual([
    expect.objectContaining({ attempt: 1, ok: true }),
  ]);
});

test('when a first attempt that succeeded is kept inside its delivery, then failures in a row count from it, read from the counters document alone after the fold', async () => {
  const answer = { status: 500 };
  const flaky = await startHttpsReceiver(() => ({ status: answer.status, body: 'x' }));
  const watched = await watchStore(db.databaseName);
  try {
    const s = build({ queueName: 'webhooks.attempts.in-a-row', store: watched.db });
    const hook = await subscribe(s, `${flaky.url}/in-a-row`);
    const fanOuts = async (n: number) => {
      for (let i = 0; i < n; i++) await s.deliveries.fanOut(clientCreated(hook.team_id), true);
    };
    const active = async () => (await s.webhooks.byId(hook._id))!.active;
    watched.take();

    await fanOuts(5);
    answer.status = 200;
    await fanOuts(1);
    answer.status = 500;
    await fanOuts(5);
    // Ten failures, but the success between them is only a tally and a delivery's first attempt.
    expect(flaky.requests).toHaveLength(11);
    expect(await db.collection('attempts').countDocuments({ webhook_id: hook._id, ok: true })).toBe(0);
    // The attempts' path reads nothing to count failures in a row: its reads are of the team's webhooks.
    expect(watched.take().filter((q) => q.op === 'find' && q.collection !== 'webhooks')).toEqual([]);

    await s.fold();
    expect(await db.collection('attempt_tallies').countDocuments({ webhook_id: hook._id })).toBe(0);
    expect(await db.collection('webhook_counters').findOne({ _id: hook._id as never })).toMatchObject({
      total_deliveries: 11,
      failed_deliveries: 10,
      last_success_at: expect.any(Date),
      failed_since_success: Array.from({ length: 5 }, () => expect.any(Date)),
    });
    expect(await active()).toBe(true);
    watched.take();
    expect(await s.counters.failuresInARow(hook._id, hook.active_since, 6)).toBe(5);
    expect(watched.take()).toEqual([expect.objectContaining({ op: 'find', collection: 'webhook_counters' })]);

    await fanOuts(1);
    await s.fold();
    expect(await s.webhooks.byId(hook._id)).toMatchObject({ active: false, deactivated_reason: 'failures' });
  } finally {
    await watched.close();
    await flaky.close();
  }
});

test('when many events are fanned out at once to several webhooks, then their deliveries and attempts are stored by grouped inserts', async () => {
  const watched = await watchStore(db.databaseName);
  try {
    const s = build({ queueName: 'webhooks.attempts.grouped', store: watched.db });
    const team = newId('team');
    const hooks = [];
    for (const n of [1, 2, 3, 4]) hooks.push(await subscribe(s, `${receiver.url}/grouped-${n}`, team));
    // 15 events to 4 webhooks: enough to group, few enough that the receiver on a busy 2-core
    // machine answers each POST well within SLOW_POST_MS, so every attempt stays inside its delivery.
    const events = Array.from({ length: 15 }, () => clientCreated(team));
    const deliveries = events.length * hooks.length;
    watched.take();

    await Promise.all(events.map((e) => s.deliveries.fanOut(e, true)));

    for (const hook of hooks) expect(postsTo(receiver, new URL(hook.url).pathname)).toHaveLength(events.length);
    expect(
      await db.collection('deliveries').countDocuments({
        webhook_id: { $in: hooks.map((h) => h._id) },
        status: 'succeeded',
        first_attempt: { $ne: null },
      }),
    ).toBe(deliveries);
    // A read of the team's webhooks per event (no team versions here to keep a copy) and grouped inserts.
    const sent = watched.take();
    expect(
      sent.every(
        (q) =>
          (q.op === 'insert' && ['attempt_tallies', 'deliveries'].includes(q.collection)) ||
          (q.op === 'find' && q.collection === 'webhooks'),
      ),
    ).toBe(true);
    // Two documents a delivery (a tally and the delivery), two to an insert at least: how many
    // more share one depends on how the receiver's answers spread in time.
    expect(sent.filter((q) => q.op === 'insert').length).toBeLessThanOrEqual(deliveries);
  } finally {
    await watched.close();
  }
});

test("when a receiver answers with NUL in its body beside two other teams' deliveries in the same insert, then all three events are done at once and every delivery is stored, its body cleaned", async () => {
  // The three POSTs are answered together, so their deliveries go in one insert (the attempts' tallies linger for each other first).
  const held: Array<() => void> = [];
  const together = await startHttpsReceiver((req, res) => {
    held.push(() =>
      res.writeHead(200, { 'content-type': 'text/plain' }).end(req.path === '/nul' ? 'ok\0\0done\0' : 'fine'),
    );
    if (held.length === 3) held.splice(0).forEach((answer) => answer());
  });
  const watched = await watchStore(db.databaseName);
  try {
    const s = build({ queueName: 'webhooks.attempts.nul', store: watched.db });
    const [nul, ...others] = [
      await subscribe(s, `${together.url}/nul`),
      await subscribe(s, `${together.url}/a`),
      await subscribe(s, `${together.url}/b`),
    ];
    let grouped = false;
    // Until the three went in one insert (a loaded machine may spread the answers apart): each round must hold anyway.
    for (let round = 0; round < 5 && !grouped; round++) {
      const events = [nul, ...others].map((hook) => clientCreated(hook.team_id));
      watched.take();

      const fanned = await Promise.allSettled(events.map((e) => s.deliveries.fanOut(e, true)));

      expect(fanned.map((f) => f.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
      const stored = await Promise.all([nul, ...others].map((hook, i) => deliveryOf(hook, events[i].id)));
      expect(stored.map((d) => [d?.status, d?.first_attempt?.response_body])).toEqual([
        ['succeeded', 'okdone'],
        ['succeeded', 'fine'],
        ['succeeded', 'fine'],
      ]);
      expect(s.pushed).toEqual([]);
      grouped = watched.take().some((q) => q.op === 'insert' && q.collection === 'deliveries' && q.documents === 3);
    }
    expect(grouped).toBe(true);
  } finally {
    await watched.close();
    await together.close();
  }
});
