// Delivery attempts in process, over the run's store and broker (a scratch
// exchange): a queued attempt is claimed before it is sent, so copies of one
// attempt job running at once make one POST; a claim whose holder died runs out;
// an attempt a dead copy recorded is finished without a second POST; a deactivated
// webhook's alert (real SMTP listener) and the logs show only scheme and host. The
// fan-out makes first attempts itself, without the attempts queue, a read or a
// claim, and stores many events' deliveries in a few inserts; a redelivered event
// sends only what no copy stored; a receiver that hangs holds only its webhook's
// slots; a first attempt a crash left unmade is made by the rescue.
import { randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';
import type { ConsumerHandle } from '@lpm/shared/messaging/broker';
import { newEvent } from '@lpm/shared/events';
import { newId } from '@lpm/shared/ids';
import { createMailer, type Mailer } from '@lpm/shared/mailer';
import { WorkQueue } from '@lpm/shared/messaging/work-queue';
import { mainQueueArguments } from '@lpm/shared/messaging/queues';
import { openStore } from '@lpm/shared/store/orm';
import { startHttpsReceiver, type HttpsReceiver } from '@lpm/test-kit/https-receiver';
import { scratchBroker, type ScratchBroker } from '@lpm/test-kit/scratch-broker';
import { startSmtpListener, type SmtpListener } from '@lpm/test-kit/smtp-listener';
import { captureLogger, waitFor } from '@lpm/test-kit/wait';
import { CountersRepository } from '../src/data/counters-repository.ts';
import { DeliveriesRepository } from '../src/data/deliveries-repository.ts';
import { WEBHOOK_ENTITIES, type DeliveryRecord, type WebhookRecord } from '../src/data/webhook-entity.ts';
import { WebhooksRepository } from '../src/data/webhooks-repository.ts';
import { Deactivation } from '../src/domain/deactivation.ts';
import { ATTEMPT_JOB, Deliveries, attemptClaimMs, type AttemptJob } from '../src/domain/deliveries.ts';
import { newDelivery } from '../src/domain/delivery-records.ts';
import { KeyLimiter } from '../src/domain/key-limiter.ts';
import { SecretBox } from '../src/domain/secret-box.ts';
import { generateSecret } from '../src/domain/signing.ts';
import { UrlGuard } from '../src/upstream/url-guard.ts';
import { WebhookSender } from '../src/upstream/webhook-sender.ts';
import { equalityOn, watchStore } from './store-commands.ts';

const SEND_TIMEOUT_MS = 1000;
/** What a copy that finds the attempt claimed waits before it comes back (Deliveries' CLAIMED_DEFER_MS). */
const CLAIMED_DEFER_MS = 5000;

let store: Awaited<ReturnType<typeof openStore>>;
let db: Db;
let scratch: ScratchBroker;
let smtp: SmtpListener;
let mailer: Mailer;
let receiver: HttpsReceiver;
let sender: WebhookSender;
const box = new SecretBox(randomBytes(32));
const log = captureLogger();
const owner = { id: newId('user'), name: 'Dona Ana', email: 'ana@lpm.test' };

/** A webhook's attempts in flight at once (the service's is WEBHOOK_CONCURRENCY / 16). */
const PER_WEBHOOK = 8;
/** What a job for a busy webhook waits before it comes back (Deliveries' DEFER_MS). */
const DEFER_MS = 1000;

/** The webhooks side of one scenario: repositories on the store (or a watched client of it), a real attempts queue, a claim period. */
function build(opts: { claimMs?: number; queueName: string; store?: Db; sender?: WebhookSender; sendTimeoutMs?: number }) {
  const queue = new WorkQueue<AttemptJob>(scratch.broker, { queue: scratch.broker.queueName(opts.queueName), type: ATTEMPT_JOB });
  for (const q of ['', '.retry', '.dlq', `.delay.${DEFER_MS}`, `.delay.${CLAIMED_DEFER_MS}`]) scratch.declared.add(`${queue.queue}${q}`);
  const webhooks = new WebhooksRepository(opts.store ?? db);
  const sendTimeoutMs = opts.sendTimeoutMs ?? SEND_TIMEOUT_MS;
  const deliveriesRepo = new DeliveriesRepository(opts.store ?? db, { attemptClaimMs: opts.claimMs ?? attemptClaimMs(sendTimeoutMs) });
  const deactivation = new Deactivation({ webhooks, deliveries: deliveriesRepo, mailer, owners: { owner: async () => owner }, logger: log });
  // Every job pushed (a deferred or put-off attempt), beside the real queue.
  const pushed: { job: AttemptJob; delayMs?: number }[] = [];
  const deliveries = new Deliveries({
    webhooks,
    deliveries: deliveriesRepo,
    queue: { push: (job, delayMs) => (pushed.push({ job, delayMs }), queue.push(job, delayMs)) },
    sender: opts.sender ?? sender,
    box,
    deactivation,
    limiter: new KeyLimiter(),
    perWebhook: PER_WEBHOOK,
    concurrency: 128,
    retryDelaysMs: [],
    sendTimeoutMs,
  });
  return { queue, pushed, webhooks, deliveriesRepo, deliveries };
}

type Scenario = ReturnType<typeof build>;

async function subscribe(s: Scenario, url: string, teamId = newId('team')): Promise<WebhookRecord> {
  const now = new Date();
  const record: WebhookRecord = {
    _id: newId('wh'),
    team_id: teamId,
    url,
    url_key: url,
    description: null,
    events: ['client.created'],
    active: true,
    secret_sealed: box.seal(generateSecret()),
    active_since: now,
    alert_pending: false,
    created_at: now,
    updated_at: now,
  };
  await s.webhooks.insertWithin(record, 25);
  return record;
}

/** One client.created for the webhook's team, stored as the fan-out stores it for a webhook with no free slot: its delivery and the job of its first attempt. */
async function deliver(s: Scenario, hook: WebhookRecord): Promise<{ delivery: DeliveryRecord; job: AttemptJob }> {
  const event = newEvent('client.created', hook.team_id, { id: newId('cli'), name: 'Cliente' }, null, newId('user'));
  const delivery = newDelivery(event, hook._id, new Date());
  expect(await s.deliveriesRepo.insert(delivery)).toBe('inserted');
  return { delivery, job: { delivery_id: delivery._id, webhook_id: hook._id, team_id: hook.team_id, attempt: 1 } };
}

const postsTo = (r: HttpsReceiver, path: string) => r.requests.filter((q) => q.path === path);
const clientCreated = (teamId: string) => newEvent('client.created', teamId, { id: newId('cli'), name: 'Cliente' }, null, newId('user'));
const deliveryOf = (hook: WebhookRecord, eventId: string) => db.collection<DeliveryRecord>('deliveries').findOne({ webhook_id: hook._id, event_id: eventId });
/** The claim slots left for a delivery's attempts. */
const claimsOf = async (deliveryId: string) =>
  (await db.collection<{ _id: string }>('attempt_claims').find({}).toArray()).filter((c) => c._id.startsWith(`${deliveryId}:`));
const messages = async (queue: string) => (await scratch.ch.checkQueue(queue)).messageCount;

beforeAll(async () => {
  store = await openStore({
    url: process.env.MONGO_URL!,
    dbName: `${process.env.MONGO_DB_PREFIX}webhooks_attempts_${randomBytes(4).toString('hex')}`,
    entities: WEBHOOK_ENTITIES,
  });
  db = store.db;
  scratch = await scratchBroker('webhooks-attempts-test.events');
  smtp = await startSmtpListener();
  mailer = createMailer({ smtpUrl: smtp.url, from: 'alerts@lpm.test', logger: log });
  // Answers after 300 ms, so copies that start together overlap for the whole POST.
  receiver = await startHttpsReceiver(async () => {
    await new Promise((r) => setTimeout(r, 300));
    return { status: 200, body: 'ok' };
  });
  sender = new WebhookSender({ guard: new UrlGuard({ allowPrivate: true }), timeoutMs: SEND_TIMEOUT_MS });
});

afterAll(async () => {
  await sender?.close();
  await receiver?.close();
  await mailer?.close();
  await smtp?.close();
  await scratch?.close();
  await db?.dropDatabase();
  await store?.close();
});

test('when two copies of one attempt job run at once, then exactly one POST reaches the receiver and the other copy is put off', async () => {
  const s = build({ queueName: 'webhooks.attempts.twice' });
  const hook = await subscribe(s, `${receiver.url}/twice`);
  const { delivery, job } = await deliver(s, hook);

  await Promise.all([s.deliveries.attempt(job), s.deliveries.attempt({ ...job })]);

  expect(postsTo(receiver, '/twice')).toHaveLength(1);
  expect(await s.deliveriesRepo.get(delivery._id)).toMatchObject({ status: 'succeeded', attempts_count: 1 });
  expect(await s.deliveriesRepo.attemptsOf(hook._id, [(await s.deliveriesRepo.get(delivery._id))!])).toHaveLength(1);
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
  const dead = await s.deliveriesRepo.claimAttempt(delivery._id, 1);
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
  expect(await s.deliveriesRepo.dropExpiredClaims()).toBeGreaterThanOrEqual(2);
  expect(await claimsOf(delivery._id)).toEqual([]);
});

test("when a claim's second slot is held by another copy, then the claim is refused and only its own first slot is given back", async () => {
  const claimMs = attemptClaimMs(SEND_TIMEOUT_MS);
  const s = build({ claimMs, queueName: 'webhooks.attempts.half-claim' });
  const hook = await subscribe(s, `${receiver.url}/half-claim`);
  const { delivery } = await deliver(s, hook);
  // Another copy's slots just after this one's first (two, in case a slot boundary passes meanwhile).
  const slot = Math.floor(Date.now() / claimMs);
  const theirs = [slot + 1, slot + 2].map((n) => ({ _id: `${delivery._id}:1:${n}`, owner: 'another-copy', expires_at: new Date((n + 1) * claimMs), slot: n }));
  await db.collection<(typeof theirs)[number]>('attempt_claims').insertMany(theirs);

  expect(await s.deliveriesRepo.claimAttempt(delivery._id, 1)).toBeNull();

  expect((await claimsOf(delivery._id)).map((c) => c._id).sort()).toEqual(theirs.map((c) => c._id).sort());
});

test('when a copy died after recording its attempt but before the delivery outcome, then the next copy finishes from the record without a second POST', async () => {
  const s = build({ queueName: 'webhooks.attempts.recorded' });
  const hook = await subscribe(s, `${receiver.url}/recorded`);
  const { delivery, job } = await deliver(s, hook);
  const at = new Date(Date.now() - 1000);
  await s.deliveriesRepo.recordAttempt({
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
  expect(await s.deliveriesRepo.get(delivery._id)).toMatchObject({ status: 'succeeded', attempts_count: 1, last_attempt_at: at });
});

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
        expect.objectContaining({ level: 'info', msg: 'webhook deactivated after consecutive failures', obj: expect.objectContaining({ url: failing.url }) }),
        expect.objectContaining({ level: 'info', msg: 'mail sent', obj: expect.objectContaining({ subject: `Webhook deactivated: ${failing.url}` }) }),
      ]),
    );
  } finally {
    await failing.close();
  }
});

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
    expect(await deliveryOf(hook, event.id)).toMatchObject({ status: 'succeeded', attempts_count: 1, next_attempt_at: null, due_minute: null });
    expect(await messages(s.queue.queue)).toBe(0);
    // The team's active webhooks read once, by equalities FerretDB sends to SQL (their events are matched in
    // process); then the attempt's tally and the delivery, with the attempt inside it, inserted, and nothing
    // else: no claim, no count, no update, no document of `attempts`.
    const sent = watched.take().map((q) => (q.op === 'find' ? `find ${q.collection} ${JSON.stringify(q.filter)}` : `${q.op} ${q.collection}`));
    expect(sent).toEqual([`find webhooks ${JSON.stringify({ team_id: hook.team_id })}`, 'insert attempt_tallies', 'insert deliveries']);
    // The delivery log's markers went with the insert, and the tally counts the delivery in the log by its minute.
    const stored = (await deliveryOf(hook, event.id))!;
    expect(stored.first_attempt).toEqual({ at: stored.last_attempt_at, ok: true, status_code: 200, latency_ms: expect.any(Number), error_class: null, response_body: expect.any(String) });
    const [attempt] = await s.deliveriesRepo.attemptsOf(hook._id, [stored]);
    expect(attempt).toMatchObject({ _id: `${stored._id}:1`, delivery_id: stored._id, webhook_id: hook._id, team_id: hook.team_id, attempt: 1, ok: true, status_code: 200 });
    expect(stored.log_minute).toBe(`${hook._id}:${Math.floor(stored.created_at.getTime() / 60_000)}`);
    expect(await watched.db.collection('attempt_tallies').findOne({ _id: `${stored._id}:1` as never })).toMatchObject({ logged: stored.created_at });
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
    expect(await s.deliveriesRepo.attemptsOf(hook._id, [stored!])).toHaveLength(1);
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
  expect(s.pushed).toEqual([{ job: { delivery_id: pending._id, webhook_id: hook._id, team_id: hook.team_id, attempt: 1 }, delayMs: undefined }]);
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
  expect(await s.deliveriesRepo.attemptsOf(hook._id, stored)).toEqual([expect.objectContaining({ attempt: 1, ok: true })]);
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
  expect(await s.deliveriesRepo.attemptById(`${pending._id}:1`)).toMatchObject({ ok: true, attempt: 1 });

  await s.deliveries.attempt({ delivery_id: pending._id, webhook_id: hook._id, team_id: hook.team_id, attempt: 1 });
  expect(postsTo(receiver, '/pending-copy')).toHaveLength(1);
  const stored = (await s.deliveriesRepo.get(pending._id))!;
  expect(stored).toMatchObject({ status: 'succeeded', attempts_count: 1 });
  expect(stored.first_attempt).toBeUndefined();
  expect(await s.deliveriesRepo.attemptsOf(hook._id, [stored])).toEqual([expect.objectContaining({ attempt: 1, ok: true })]);
});

test('when a first attempt that succeeded is kept inside its delivery, then failures in a row count from it, before and after the fold adds it', async () => {
  const answer = { status: 500 };
  const flaky = await startHttpsReceiver(() => ({ status: answer.status, body: 'x' }));
  try {
    const s = build({ queueName: 'webhooks.attempts.in-a-row' });
    const counters = new CountersRepository(db);
    const hook = await subscribe(s, `${flaky.url}/in-a-row`);
    const fanOuts = async (n: number) => {
      for (let i = 0; i < n; i++) await s.deliveries.fanOut(clientCreated(hook.team_id), true);
    };
    const active = async () => (await s.webhooks.byId(hook._id))!.active;

    await fanOuts(5);
    answer.status = 200;
    await fanOuts(1);
    answer.status = 500;
    await fanOuts(5);
    // Ten failures, but the success between them is only a tally and a delivery's first attempt.
    expect(flaky.requests).toHaveLength(11);
    expect(await db.collection('attempts').countDocuments({ webhook_id: hook._id, ok: true })).toBe(0);
    expect(await active()).toBe(true);
    expect(await s.deliveriesRepo.failuresInARow(hook._id, hook.active_since, 6)).toBe(5);

    // Folded: the tally is gone, and the counters' last success stands for it.
    while ((await counters.fold()) > 0);
    expect(await db.collection('attempt_tallies').countDocuments({ webhook_id: hook._id })).toBe(0);
    expect(await db.collection('webhook_counters').findOne({ _id: hook._id as never })).toMatchObject({ total_deliveries: 11, failed_deliveries: 10, last_success_at: expect.any(Date) });
    expect(await s.deliveriesRepo.failuresInARow(hook._id, hook.active_since, 6)).toBe(5);
    expect(await active()).toBe(true);

    await fanOuts(1);
    expect(await active()).toBe(false);
  } finally {
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
    const events = Array.from({ length: 30 }, () => clientCreated(team));
    watched.take();

    await Promise.all(events.map((e) => s.deliveries.fanOut(e, true)));

    for (const hook of hooks) expect(postsTo(receiver, new URL(hook.url).pathname)).toHaveLength(events.length);
    expect(await db.collection('deliveries').countDocuments({ webhook_id: { $in: hooks.map((h) => h._id) }, status: 'succeeded', first_attempt: { $ne: null } })).toBe(120);
    // 120 deliveries: a read of the team's webhooks per event (no team versions here to keep a copy) and grouped inserts.
    const sent = watched.take();
    expect(sent.every((q) => (q.op === 'insert' && ['attempt_tallies', 'deliveries'].includes(q.collection)) || (q.op === 'find' && q.collection === 'webhooks'))).toBe(true);
    // 240 documents (a tally and a delivery each), two to an insert at least: how many more
    // share one depends on how the receiver's answers spread in time (3 to 5 on a 2-core machine).
    expect(sent.filter((q) => q.op === 'insert').length).toBeLessThanOrEqual(240 / 2);
  } finally {
    await watched.close();
  }
});

test("when a receiver answers with NUL in its body beside two other teams' deliveries in the same insert, then all three events are done at once and every delivery is stored, its body cleaned", async () => {
  // The three POSTs are answered together, so their deliveries go in one insert (the attempts' tallies linger for each other first).
  const held: Array<() => void> = [];
  const together = await startHttpsReceiver((req, res) => {
    held.push(() => res.writeHead(200, { 'content-type': 'text/plain' }).end(req.path === '/nul' ? 'ok\0\0done\0' : 'fine'));
    if (held.length === 3) held.splice(0).forEach((answer) => answer());
  });
  const watched = await watchStore(db.databaseName);
  try {
    const s = build({ queueName: 'webhooks.attempts.nul', store: watched.db });
    const [nul, ...others] = [await subscribe(s, `${together.url}/nul`), await subscribe(s, `${together.url}/a`), await subscribe(s, `${together.url}/b`)];
    let grouped = false;
    // Until the three went in one insert (a loaded machine may spread the answers apart): each round must hold anyway.
    for (let round = 0; round < 5 && !grouped; round++) {
      const events = [nul, ...others].map((hook) => clientCreated(hook.team_id));
      watched.take();

      const fanned = await Promise.allSettled(events.map((e) => s.deliveries.fanOut(e, true)));

      expect(fanned.map((f) => f.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
      const stored = await Promise.all([nul, ...others].map((hook, i) => deliveryOf(hook, events[i].id)));
      expect(stored.map((d) => [d?.status, d?.first_attempt?.response_body])).toEqual([['succeeded', 'okdone'], ['succeeded', 'fine'], ['succeeded', 'fine']]);
      expect(s.pushed).toEqual([]);
      grouped = watched.take().some((q) => q.op === 'insert' && q.collection === 'deliveries' && q.documents === 3);
    }
    expect(grouped).toBe(true);
  } finally {
    await watched.close();
    await together.close();
  }
});

test('when more events for one answering webhook come at once than it has slots, then the later ones wait for a slot in the fan-out and none goes through the attempts queue', async () => {
  const s = build({ queueName: 'webhooks.attempts.slot-wait' });
  const hook = await subscribe(s, `${receiver.url}/slot-wait`);
  // Twice its slots, against a receiver that answers after 300 ms: half of them wait for a slot.
  const events = Array.from({ length: 2 * PER_WEBHOOK }, () => clientCreated(hook.team_id));
  await Promise.all(events.map((e) => s.deliveries.fanOut(e, true)));
  expect(postsTo(receiver, '/slot-wait')).toHaveLength(events.length);
  expect(s.pushed).toEqual([]);
  expect(await db.collection('deliveries').countDocuments({ webhook_id: hook._id, status: 'succeeded' })).toBe(events.length);
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
    await waitFor('every event at the hanging receiver once it answers', () => distinct(hanging) === events.length, 60_000);
    for (const hook of [quick, stuck]) {
      await waitFor('every delivery succeeded', async () => (await db.collection('deliveries').countDocuments({ webhook_id: hook._id, status: 'succeeded' })) === events.length);
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
    expect(await db.collection('deliveries').countDocuments({ webhook_id: stuck._id, status: 'pending' })).toBe(PER_WEBHOOK);
    answer();
    await fanning;
    expect(await db.collection('deliveries').countDocuments({ webhook_id: stuck._id, status: 'succeeded' })).toBe(PER_WEBHOOK);
  } finally {
    answer();
    await patient.close();
    await hanging.close();
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
    expect(reads.every((q) => equalityOn(q, 'due_minute') && equalityOn(q, 'status') && !('next_attempt_at' in q.filter))).toBe(true);
    consumer = await s.queue.consume((job) => s.deliveries.attempt(job));
    await waitFor('the rescued attempt', () => postsTo(receiver, '/rescued').length === 2);
    await waitFor('its outcome', async () => (await s.deliveriesRepo.get(lost._id))?.status === 'succeeded');
    // The delivery log counts a delivery by its first attempt's tally: the one stored with its markers, not the one stored before them (the log's backfill counts that one).
    const tallies = await watched.db.collection<{ _id: string; logged?: Date }>('attempt_tallies').find({ webhook_id: hook._id }).toArray();
    expect(tallies.find((t) => t._id === `${lost._id}:1`)).toMatchObject({ logged: lost.created_at });
    expect(tallies.find((t) => t._id === `${legacy._id}:1`)).not.toHaveProperty('logged');
  } finally {
    await consumer?.cancel();
    await watched.db.dropDatabase();
    await watched.close();
  }
});
