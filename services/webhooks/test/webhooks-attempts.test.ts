// Delivery attempts in process, over the run's store and broker (a scratch
// exchange): an attempt is claimed before it is sent, so copies of one attempt job
// running at once make one POST; a claim whose holder died runs out; an attempt a
// dead copy recorded is finished without a second POST; and a deactivated
// webhook's alert (real SMTP listener) and the logs show only scheme and host.
import { randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';
import { newEvent } from '@lpm/shared/events';
import { newId } from '@lpm/shared/ids';
import { createMailer, type Mailer } from '@lpm/shared/mailer';
import { WorkQueue } from '@lpm/shared/messaging/work-queue';
import { openStore } from '@lpm/shared/store/orm';
import { startHttpsReceiver, type HttpsReceiver } from '../../../shared/test/support/https-receiver.ts';
import { scratchBroker, type ScratchBroker } from '../../../shared/test/support/scratch-broker.ts';
import { startSmtpListener, type SmtpListener } from '../../../shared/test/support/smtp-listener.ts';
import { captureLogger } from '../../../shared/test/support/wait.ts';
import { DeliveriesRepository } from '../src/data/deliveries-repository.ts';
import { WEBHOOK_ENTITIES, type DeliveryRecord, type WebhookRecord } from '../src/data/webhook-entity.ts';
import { WebhooksRepository } from '../src/data/webhooks-repository.ts';
import { Deactivation } from '../src/domain/deactivation.ts';
import { ATTEMPT_JOB, Deliveries, attemptClaimMs, newDelivery, type AttemptJob } from '../src/domain/deliveries.ts';
import { KeyLimiter } from '../src/domain/key-limiter.ts';
import { SecretBox } from '../src/domain/secret-box.ts';
import { generateSecret } from '../src/domain/signing.ts';
import { UrlGuard } from '../src/upstream/url-guard.ts';
import { WebhookSender } from '../src/upstream/webhook-sender.ts';

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

/** The webhooks side of one scenario: repositories on the store, a real attempts queue, a claim period. */
function build(opts: { claimMs?: number; queueName: string }) {
  const queue = new WorkQueue<AttemptJob>(scratch.broker, { queue: scratch.broker.queueName(opts.queueName), type: ATTEMPT_JOB });
  for (const q of [queue.queue, `${queue.queue}.delay.${CLAIMED_DEFER_MS}`]) scratch.declared.add(q);
  const webhooks = new WebhooksRepository(db);
  const deliveriesRepo = new DeliveriesRepository(db, { attemptClaimMs: opts.claimMs ?? attemptClaimMs(SEND_TIMEOUT_MS) });
  const deactivation = new Deactivation({ webhooks, deliveries: deliveriesRepo, mailer, owners: { owner: async () => owner }, logger: log });
  const deliveries = new Deliveries({
    webhooks,
    deliveries: deliveriesRepo,
    queue,
    sender,
    box,
    deactivation,
    limiter: new KeyLimiter(),
    perWebhook: 8,
    retryDelaysMs: [],
    sendTimeoutMs: SEND_TIMEOUT_MS,
  });
  return { queue, webhooks, deliveriesRepo, deliveries };
}

type Scenario = ReturnType<typeof build>;

async function subscribe(s: Scenario, url: string): Promise<WebhookRecord> {
  const now = new Date();
  const record: WebhookRecord = {
    _id: newId('wh'),
    team_id: newId('team'),
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

/** One client.created for the webhook's team, stored as the fan-out stores it before the first attempt: its delivery and the job of that attempt. */
async function deliver(s: Scenario, hook: WebhookRecord): Promise<{ delivery: DeliveryRecord; job: AttemptJob }> {
  const event = newEvent('client.created', hook.team_id, { id: newId('cli'), name: 'Cliente' }, null, newId('user'));
  const delivery = await s.deliveriesRepo.insertOrGet(newDelivery(event, hook._id, new Date()));
  return { delivery, job: { delivery_id: delivery._id, webhook_id: hook._id, team_id: hook.team_id, attempt: 1 } };
}

const postsTo = (r: HttpsReceiver, path: string) => r.requests.filter((q) => q.path === path);
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
  expect(await s.deliveriesRepo.attemptsOf([delivery._id])).toHaveLength(1);
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
