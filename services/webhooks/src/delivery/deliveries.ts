// From domain events to signed POSTs. A domain event becomes one delivery per
// subscribed, active webhook (idempotent: one delivery per webhook and event id),
// and each delivery one job per attempt on the attempts queue. A failed attempt is
// re-queued through the delay queue of its tier (WEBHOOK_RETRY_DELAYS); the body
// and the event id are the same on every attempt. Messages are acked only after
// their outcome is stored, so a crash repeats an attempt but never loses one.
import type { Db } from 'mongodb';
import type { Broker, ConsumerHandle } from '@lpm/shared/messaging/broker';
import { EVENT_TYPES, newEvent, type DomainEvent } from '@lpm/shared/events';
import { newId } from '@lpm/shared/ids';
import { isDuplicateKey } from '@lpm/shared/store/duplicate-key';
import { payloadBody } from '../domain/payload.ts';
import type { SecretBox } from '../domain/secret-box.ts';
import { ALL_EVENTS } from '../domain/webhooks.ts';
import type { AttemptRecord, DeliveryRecord, WebhookRecord } from '../data/webhook-entity.ts';
import type { Deactivation } from './deactivation.ts';
import type { KeyLimiter } from './key-limiter.ts';
import type { SendResult } from './sender.ts';
import { signatureHeaders } from './signing.ts';

export const ATTEMPT_JOB = 'webhooks.attempt';
/** A job waiting for a slot of a busy webhook comes back after this long. */
const DEFER_MS = 1000;
/** ... or after this long when the webhook's last attempt failed (a receiver that is down or times out). */
const STRUGGLING_DEFER_MS = 5000;
const SLOT_WAIT_MS = 100;

interface AttemptJob {
  delivery_id: string;
  webhook_id: string;
  attempt: number;
  /** Asked for through the API: no automatic retries follow it. */
  manual?: boolean;
}

type Logger = { info: (o: object, m?: string) => void; warn: (o: object, m?: string) => void; error: (o: object, m?: string) => void };

export interface DeliveriesOptions {
  db: Db;
  broker: Pick<Broker, 'consume' | 'queueName' | 'publishToQueue' | 'publishDelayed'>;
  sender: { send(url: string, body: string, headers: Record<string, string>): Promise<SendResult> };
  box: SecretBox;
  limiter: KeyLimiter;
  /** Attempts in flight to one webhook; one while its last attempt failed. */
  perWebhook: number;
  deactivation: Deactivation;
  /** Delays before attempts 2..n. */
  retryDelaysMs: number[];
  concurrency: number;
  logger: Logger;
}

export class Deliveries {
  private readonly opts: DeliveriesOptions;
  readonly attemptsQueue: string;
  /** Webhooks whose last attempt here failed: they get one slot, so a receiver that times out holds one, not `perWebhook`. */
  private readonly struggling = new Set<string>();

  constructor(opts: DeliveriesOptions) {
    this.opts = opts;
    this.attemptsQueue = opts.broker.queueName('webhooks.attempts');
  }

  private get webhooks() {
    return this.opts.db.collection<WebhookRecord>('webhooks');
  }

  private get deliveries() {
    return this.opts.db.collection<DeliveryRecord>('deliveries');
  }

  private get attempts() {
    return this.opts.db.collection<AttemptRecord>('attempts');
  }

  get maxAttempts(): number {
    return this.opts.retryDelaysMs.length + 1;
  }

  /** Domain events in: one delivery per subscribed webhook. */
  consumeFanOut(): Promise<ConsumerHandle> {
    const { broker } = this.opts;
    return broker.consume({ queue: broker.queueName('webhooks.fan-out'), bindings: [...EVENT_TYPES], prefetch: 32, handler: (e) => this.fanOut(e) });
  }

  /** Attempt jobs in: a signed POST each, up to `concurrency` at once. */
  consumeAttempts(): Promise<ConsumerHandle> {
    const { broker, concurrency } = this.opts;
    return broker.consume({ queue: this.attemptsQueue, bindings: [], prefetch: concurrency, handler: (e) => this.attempt(e.data.object as unknown as AttemptJob, e.team_id) });
  }

  async fanOut(event: DomainEvent): Promise<void> {
    const subscribed = await this.webhooks
      .find({ team_id: event.team_id, active: true, events: { $in: [event.type, ALL_EVENTS] } }, { projection: { _id: 1 } })
      .toArray();
    for (const { _id: webhookId } of subscribed) {
      const delivery = await this.deliveryFor(event, webhookId);
      // Redelivered after a crash: the job may or may not be queued; a second one is dropped by the attempt check.
      if (delivery.status === 'pending' && delivery.attempts_count === 0) await this.queue({ delivery_id: delivery._id, webhook_id: webhookId, attempt: 1 }, event.team_id);
    }
  }

  private async deliveryFor(event: DomainEvent, webhookId: string): Promise<DeliveryRecord> {
    const now = new Date();
    const delivery: DeliveryRecord = {
      _id: newId('dlv'),
      team_id: event.team_id,
      webhook_id: webhookId,
      event_id: event.id,
      event_type: event.type,
      body: payloadBody(event, webhookId),
      status: 'pending',
      attempts_count: 0,
      last_attempt_at: null,
      next_attempt_at: now,
      created_at: now,
      updated_at: now,
    };
    try {
      await this.deliveries.insertOne(delivery);
      return delivery;
    } catch (e) {
      if (!isDuplicateKey(e)) throw e;
      return (await this.deliveries.findOne({ webhook_id: webhookId, event_id: event.id }))!;
    }
  }

  private queue(job: AttemptJob, teamId: string, delayMs = 0): Promise<void> {
    const message = newEvent(ATTEMPT_JOB, teamId, job);
    return delayMs > 0 ? this.opts.broker.publishDelayed(message, this.attemptsQueue, delayMs) : this.opts.broker.publishToQueue(message, this.attemptsQueue);
  }

  /** Queues one more attempt of a delivery now (the API's retry). */
  async retryNow(delivery: DeliveryRecord): Promise<void> {
    await this.deliveries.updateOne({ _id: delivery._id }, { $set: { status: 'pending', next_attempt_at: new Date(), updated_at: new Date() } });
    await this.queue({ delivery_id: delivery._id, webhook_id: delivery.webhook_id, attempt: delivery.attempts_count + 1, manual: true }, delivery.team_id);
  }

  /**
   * Queues again deliveries whose next attempt is overdue by `graceMs`: the job of
   * a process that died between storing an outcome and queueing the next attempt.
   * A job that was only slow is then dropped by the attempt check.
   */
  async requeueStuck(graceMs: number, now = new Date()): Promise<number> {
    const stuck = await this.deliveries
      .find({ status: 'pending', next_attempt_at: { $lt: new Date(now.getTime() - graceMs) } })
      .limit(500)
      .toArray();
    for (const d of stuck) {
      await this.deliveries.updateOne({ _id: d._id, attempts_count: d.attempts_count }, { $set: { next_attempt_at: now } });
      await this.queue({ delivery_id: d._id, webhook_id: d.webhook_id, attempt: d.attempts_count + 1 }, d.team_id);
    }
    return stuck.length;
  }

  async attempt(job: AttemptJob, teamId: string): Promise<void> {
    // The slot comes first, before any store read, so a busy webhook's waiting jobs cost little.
    const struggling = this.struggling.has(job.webhook_id);
    const release = await this.opts.limiter.acquire(job.webhook_id, SLOT_WAIT_MS, struggling ? 1 : this.opts.perWebhook);
    if (!release) return this.queue(job, teamId, struggling ? STRUGGLING_DEFER_MS : DEFER_MS);
    try {
      const delivery = await this.deliveries.findOne({ _id: job.delivery_id });
      // A job for an attempt already made (a redelivery, a duplicate from fan-out) is dropped.
      if (!delivery || delivery.status !== 'pending' || delivery.attempts_count + 1 !== job.attempt) return;
      const webhook = await this.webhooks.findOne({ _id: delivery.webhook_id });
      if (!webhook || !webhook.active) {
        await this.deliveries.updateOne({ _id: delivery._id, status: 'pending' }, { $set: { status: 'skipped', next_attempt_at: null, updated_at: new Date() } });
        return;
      }
      const headers = signatureHeaders(this.opts.box.open(webhook.secret_sealed), delivery.event_id, delivery.body);
      const result = await this.opts.sender.send(webhook.url, delivery.body, headers);
      if (result.ok) this.struggling.delete(webhook._id);
      else this.struggling.add(webhook._id);
      release();
      await this.record(delivery, webhook, job, result);
    } finally {
      release();
    }
  }

  private async record(delivery: DeliveryRecord, webhook: WebhookRecord, job: AttemptJob, sent: SendResult): Promise<void> {
    const attempt: AttemptRecord = {
      _id: `${delivery._id}:${job.attempt}`,
      team_id: delivery.team_id,
      webhook_id: webhook._id,
      delivery_id: delivery._id,
      attempt: job.attempt,
      at: new Date(),
      ok: sent.ok,
      status_code: sent.statusCode,
      latency_ms: Math.round(sent.latencyMs),
      error_class: sent.errorClass,
      response_body: sent.responseBody,
    };
    let result = attempt;
    try {
      await this.attempts.insertOne(attempt);
    } catch (e) {
      if (!isDuplicateKey(e)) throw e;
      // Recorded before a crash (or by a duplicate job): finish from what was recorded.
      result = (await this.attempts.findOne({ _id: attempt._id }))!;
    }
    const at = result.at;
    const delay = this.opts.retryDelaysMs[job.attempt - 1];
    const after = result.ok ? { inactive: false, deactivatedNow: false } : await this.opts.deactivation.afterFailure(webhook);
    const retry = !result.ok && !job.manual && delay !== undefined && !after.inactive;
    const status = result.ok ? 'succeeded' : retry ? 'pending' : 'failed';
    const next = retry ? new Date(at.getTime() + delay!) : null;
    await this.deliveries.updateOne(
      { _id: delivery._id },
      { $set: { status, attempts_count: job.attempt, last_attempt_at: at, next_attempt_at: next, updated_at: at } },
    );
    if (retry) await this.queue({ delivery_id: delivery._id, webhook_id: webhook._id, attempt: job.attempt + 1 }, delivery.team_id, delay);
    if (after.deactivatedNow) await this.opts.deactivation.sendAlert(webhook._id);
  }
}
