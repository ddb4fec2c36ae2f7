// The surroundings of the attempts' tests in process (webhooks-attempts, -fan-out and
// -slots .test.ts), over the run's store and broker: a database and a scratch exchange
// of the file's own, a real SMTP listener for the deactivation alert, an HTTPS
// receiver that answers after 300 ms, and build(), the webhooks side of one scenario.
// Bindings are exported live: attemptsSuite() sets them.
import { randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';
import { newEvent } from '@lpm/shared/events';
import { newId } from '@lpm/shared/ids';
import { createMailer, type Mailer } from '@lpm/shared/mailer';
import { WorkQueue } from '@lpm/shared/messaging/work-queue';
import { openStore } from '@lpm/shared/store/orm';
import { startHttpsReceiver, type HttpsReceiver } from '@lpm/test-kit/https-receiver';
import { scratchBroker, type ScratchBroker } from '@lpm/test-kit/scratch-broker';
import { startSmtpListener, type SmtpListener } from '@lpm/test-kit/smtp-listener';
import { captureLogger } from '@lpm/test-kit/wait';
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
import { webhookRecord } from './records.ts';

export const SEND_TIMEOUT_MS = 1000;
/** What a copy that finds the attempt claimed waits before it comes back (Deliveries' CLAIMED_DEFER_MS). */
export const CLAIMED_DEFER_MS = 5000;

let store: Awaited<ReturnType<typeof openStore>>;
export let db: Db;
export let scratch: ScratchBroker;
export let smtp: SmtpListener;
let mailer: Mailer;
export let receiver: HttpsReceiver;
let sender: WebhookSender;
const box = new SecretBox(randomBytes(32));
export const log = captureLogger();
export const owner = { id: newId('user'), name: 'Dona Ana', email: 'ana@lpm.test' };

/** A webhook's attempts in flight at once (the service's is WEBHOOK_CONCURRENCY / 16). */
export const PER_WEBHOOK = 8;
/** What a job for a busy webhook waits before it comes back (Deliveries' DEFER_MS). */
const DEFER_MS = 1000;

/** The webhooks side of one scenario: repositories on the store (or a watched client of it), a real attempts queue, a claim period. */
export function build(opts: {
  claimMs?: number;
  queueName: string;
  store?: Db;
  sender?: WebhookSender;
  sendTimeoutMs?: number;
}) {
  const queue = new WorkQueue<AttemptJob>(scratch.broker, {
    queue: scratch.broker.queueName(opts.queueName),
    type: ATTEMPT_JOB,
  });
  for (const q of ['', '.retry', '.dlq', `.delay.${DEFER_MS}`, `.delay.${CLAIMED_DEFER_MS}`])
    scratch.declared.add(`${queue.queue}${q}`);
  const webhooks = new WebhooksRepository(opts.store ?? db);
  const sendTimeoutMs = opts.sendTimeoutMs ?? SEND_TIMEOUT_MS;
  const deliveriesRepo = new DeliveriesRepository(opts.store ?? db, {
    attemptClaimMs: opts.claimMs ?? attemptClaimMs(sendTimeoutMs),
  });
  const counters = new CountersRepository(opts.store ?? db);
  const deactivation = new Deactivation({
    webhooks,
    counters,
    mailer,
    owners: { owner: async () => owner },
    logger: log,
  });
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
  // What the counter fold's job does every second: the attempts added up, and the webhooks they failed checked.
  const fold = async () => {
    while ((await counters.fold()) > 0);
    await deactivation.afterFailures(counters.takeFailing());
  };
  return { queue, pushed, webhooks, deliveriesRepo, deliveries, counters, fold };
}

export type Scenario = ReturnType<typeof build>;

export async function subscribe(s: Scenario, url: string, teamId = newId('team')): Promise<WebhookRecord> {
  const record = webhookRecord(teamId, url, { events: ['client.created'], secret_sealed: box.seal(generateSecret()) });
  await s.webhooks.insertWithin(record, 25);
  return record;
}

/** One client.created for the webhook's team, stored as the fan-out stores it for a webhook with no free slot: its delivery and the job of its first attempt. */
export async function deliver(
  s: Scenario,
  hook: WebhookRecord,
): Promise<{ delivery: DeliveryRecord; job: AttemptJob }> {
  const event = newEvent('client.created', hook.team_id, { id: newId('cli'), name: 'Cliente' }, null, newId('user'));
  const delivery = newDelivery(event, hook._id, new Date());
  expect(await s.deliveriesRepo.insert(delivery)).toBe('inserted');
  return { delivery, job: { delivery_id: delivery._id, webhook_id: hook._id, team_id: hook.team_id, attempt: 1 } };
}

export const postsTo = (r: HttpsReceiver, path: string) => r.requests.filter((q) => q.path === path);
export const clientCreated = (teamId: string) =>
  newEvent('client.created', teamId, { id: newId('cli'), name: 'Cliente' }, null, newId('user'));
export const deliveryOf = (hook: WebhookRecord, eventId: string) =>
  db.collection<DeliveryRecord>('deliveries').findOne({ webhook_id: hook._id, event_id: eventId });
/** The claim slots left for a delivery's attempts. */
export const claimsOf = async (deliveryId: string, store: Db = db) =>
  (await store.collection<{ _id: string }>('attempt_claims').find({}).toArray()).filter((c) =>
    c._id.startsWith(`${deliveryId}:`),
  );
export const messages = async (queue: string) => (await scratch.ch.checkQueue(queue)).messageCount;

/** Around the file's tests: its own database, exchange (and so queues), SMTP listener and receiver; `name` tells them apart. */
export function attemptsSuite(name: string): void {
  beforeAll(async () => {
    store = await openStore({
      url: process.env.MONGO_URL!,
      dbName: `${process.env.MONGO_DB_PREFIX}webhooks_${name.replaceAll('-', '_')}_${randomBytes(4).toString('hex')}`,
      entities: WEBHOOK_ENTITIES,
    });
    db = store.db;
    scratch = await scratchBroker(`webhooks-${name}-test.events`);
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
}
