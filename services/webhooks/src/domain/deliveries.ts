// From domain events to signed POSTs. A domain event becomes one delivery per
// subscribed, active webhook (idempotent: one delivery per webhook and event id),
// stored pending before anything is sent; the fan-out then makes each first attempt
// itself, concurrently across the webhooks, with the webhook and the delivery it
// has in memory, and the event is acked once those attempts are stored (a crash
// before that redelivers the event, which finds the deliveries and attempts them
// again). A webhook without a free slot gets its first attempt queued instead. A
// failed attempt is queued again after the delay of its tier (WEBHOOK_RETRY_DELAYS);
// the body and the event id are the same on every attempt. Jobs are acked only
// after their outcome is stored, so a crash repeats an attempt but never loses one.
// Each attempt is claimed before its "already made?" check and its POST, so copies
// of one attempt running at once (a redelivery, a requeue, two replicas) send it once.
// A first attempt the fan-out makes at once (its slot taken before the insert) is
// claimed by the delivery itself, stored with `first_claim_until` a claim period
// ahead: no claim documents. Copies put that attempt off until then, so a crash
// between the insert and the POST delays it until the claim has run out.
import type { DomainEvent } from '@lpm/shared/events';
import { newId } from '@lpm/shared/ids';
import type { DeliveriesRepository } from '../data/deliveries-repository.ts';
import type { AttemptRecord, DeliveryRecord, WebhookRecord } from '../data/webhook-entity.ts';
import type { WebhooksRepository } from '../data/webhooks-repository.ts';
import type { SendResult } from '../upstream/webhook-sender.ts';
import { CoalescedRuns } from './coalesced-runs.ts';
import type { Deactivation } from './deactivation.ts';
import type { KeyLimiter } from './key-limiter.ts';
import { payloadBody } from './payload.ts';
import type { SecretBox } from './secret-box.ts';
import { signatureHeaders } from './signing.ts';
import { ALL_EVENTS } from './webhooks.ts';

export const ATTEMPT_JOB = 'webhooks.attempt';
/** A job waiting for a slot of a busy webhook comes back after this long. */
const DEFER_MS = 1000;
/** ... or after this long when the webhook's last attempt failed (a receiver that is down or times out). */
const STRUGGLING_DEFER_MS = 5000;
/**
 * How long an attempt waits for a slot of a webhook that answers: its slots turn over
 * within a POST, and a trip through the delay queue costs a publish, a claim and
 * three reads. The attempt holds its message meanwhile, so the wait is bounded.
 */
const SLOT_WAIT_MS = 2000;
/** ... of a webhook whose last attempt failed: its one slot may be held for a whole timeout, so its attempts go back at once. */
const STRUGGLING_SLOT_WAIT_MS = 100;
/** A job whose attempt another copy holds comes back after this long: to find it made, or the claim of a dead holder over. */
const CLAIMED_DEFER_MS = STRUGGLING_DEFER_MS;
/** Room beyond the send's deadline in a claim: for the reads before the POST and the insert of its outcome after it. */
export const ATTEMPT_CLAIM_MARGIN_MS = 15_000;

/** How long an attempt's claim is exclusive at least, for a sender whose POST ends within `sendTimeoutMs`. */
export function attemptClaimMs(sendTimeoutMs: number, marginMs = ATTEMPT_CLAIM_MARGIN_MS): number {
  return sendTimeoutMs + marginMs;
}

const attemptId = (deliveryId: string, attempt: number) => `${deliveryId}:${attempt}`;

export interface AttemptJob {
  delivery_id: string;
  webhook_id: string;
  team_id: string;
  attempt: number;
  /** Asked for through the API: no automatic retries follow it. */
  manual?: boolean;
}

/** Where attempt jobs go (a WorkQueue<AttemptJob>). */
export interface AttemptQueue {
  push(job: AttemptJob, delayMs?: number): Promise<void>;
}

/** What an attempt's POST needs. */
interface Target {
  delivery: DeliveryRecord;
  webhook: WebhookRecord;
}

/** A claimed attempt's target, and the attempt's record when a copy made it already. */
interface Loaded extends Target {
  made: AttemptRecord | null;
}

export interface DeliveriesOptions {
  webhooks: WebhooksRepository;
  deliveries: DeliveriesRepository;
  queue: AttemptQueue;
  sender: { send(url: string, body: string, headers: Record<string, string>): Promise<SendResult> };
  box: SecretBox;
  limiter: KeyLimiter;
  /** Attempts in flight to one webhook; one while its last attempt failed. */
  perWebhook: number;
  deactivation: Deactivation;
  /** Delays before attempts 2..n. */
  retryDelaysMs: number[];
  /** The sender's deadline for one POST: a claimed attempt is sent only when it ends before the claim can be taken over. */
  sendTimeoutMs: number;
}

export class Deliveries {
  private readonly opts: DeliveriesOptions;
  /** Webhooks whose last attempt here failed: they get one slot, so a receiver that times out holds one, not `perWebhook`. */
  private readonly struggling = new Set<string>();
  /** Counting a webhook's attempts, once at a time per webhook here: attempts recorded meanwhile share the next count. */
  private readonly counts = new CoalescedRuns();

  constructor(opts: DeliveriesOptions) {
    this.opts = opts;
  }

  get maxAttempts(): number {
    return this.opts.retryDelaysMs.length + 1;
  }

  /**
   * A domain event in: one delivery per subscribed webhook, and its first attempt
   * made here, concurrently across the webhooks (each within its own slots). Every
   * webhook's attempt is over or queued before this resolves (and the event is acked).
   */
  async fanOut(event: DomainEvent): Promise<void> {
    const webhooks = await this.opts.webhooks.subscribed(event.team_id, event.type, ALL_EVENTS);
    const outcomes = await Promise.allSettled(webhooks.map((webhook) => this.deliverFirst(event, webhook)));
    const failed = outcomes.find((o) => o.status === 'rejected');
    if (failed) throw failed.reason;
  }

  private async deliverFirst(event: DomainEvent, webhook: WebhookRecord): Promise<void> {
    // The slot before the insert: holding one, the delivery is stored claiming its first attempt for this call.
    const release = await this.slot(webhook._id);
    try {
      const now = new Date();
      const claimedUntil = release ? this.opts.deliveries.firstClaimUntil(now) : null;
      const candidate = newDelivery(event, webhook._id, now, claimedUntil);
      const delivery = await this.opts.deliveries.insertOrGet(candidate);
      if (delivery.status !== 'pending' || delivery.attempts_count !== 0) return;
      const job: AttemptJob = { delivery_id: delivery._id, webhook_id: webhook._id, team_id: event.team_id, attempt: 1 };
      if (!release || !claimedUntil) return await this.defer(job);
      if (delivery._id !== candidate._id) {
        // Stored by an earlier copy of the event (a redelivery, or a copy running now). While the copy
        // that stored it may be making the first attempt under the delivery's claim, come back later.
        if (firstClaimHeld(delivery, job)) return await this.putOff(job, release);
        // Otherwise the attempt step claims and reads again.
        return await this.claimed(job, release);
      }
      // Stored just now: no attempt of it can have been recorded, and the webhook was read a moment ago.
      return await this.send(job, { delivery, webhook }, claimedUntil.getTime(), release);
    } finally {
      release?.();
    }
  }

  /** Queues one more attempt of a delivery now (the API's retry). */
  async retryNow(delivery: DeliveryRecord): Promise<void> {
    await this.opts.deliveries.markPending(delivery._id, new Date());
    await this.opts.queue.push({ delivery_id: delivery._id, webhook_id: delivery.webhook_id, team_id: delivery.team_id, attempt: delivery.attempts_count + 1, manual: true });
  }

  /**
   * Queues again deliveries whose next attempt is overdue by `graceMs`: the job of
   * a process that died between storing an outcome and queueing the next attempt,
   * or the first attempt of an event that was dead-lettered after its deliveries
   * were stored. A job that was only slow is then dropped by the attempt check.
   */
  requeueStuck(graceMs: number, now = new Date()): Promise<number> {
    return this.opts.deliveries.visitOverdue(new Date(now.getTime() - graceMs), async (d) => {
      await this.opts.deliveries.requeued(d, now);
      await this.opts.queue.push({ delivery_id: d._id, webhook_id: d.webhook_id, team_id: d.team_id, attempt: d.attempts_count + 1 });
    });
  }

  /** Counts the attempts left uncounted (the maintenance job). */
  async countStragglers(): Promise<number> {
    let counted = 0;
    for (const id of await this.opts.webhooks.withUncounted(500)) counted += await this.opts.webhooks.countAttempts(id, { wait: true });
    return counted;
  }

  /** Drops the claims that holders which died left behind (the maintenance job). */
  sweepClaims(): Promise<number> {
    return this.opts.deliveries.dropExpiredClaims();
  }

  /**
   * An attempt job in: the attempt claimed, a signed POST, its outcome stored, and
   * the next attempt queued if one is owed. A copy that finds the attempt claimed
   * (by claim documents, or by its delivery's `first_claim_until`) comes back later;
   * by then it was made (and the copy is dropped) or its holder died and the claim
   * is over (and the copy makes it). A crash after the POST and before its outcome
   * is stored still repeats the POST (at least once).
   */
  async attempt(job: AttemptJob): Promise<void> {
    // The slot comes first, before any store read, so a busy webhook's waiting jobs cost little.
    const release = await this.slot(job.webhook_id);
    if (!release) return this.defer(job);
    try {
      await this.claimed(job, release);
    } finally {
      release();
    }
  }

  /** A slot of the webhook's within SLOT_WAIT_MS (its only one, within STRUGGLING_SLOT_WAIT_MS, while it struggles), or null. */
  private slot(webhookId: string): Promise<(() => void) | null> {
    const struggling = this.struggling.has(webhookId);
    return this.opts.limiter.acquire(webhookId, struggling ? STRUGGLING_SLOT_WAIT_MS : SLOT_WAIT_MS, struggling ? 1 : this.opts.perWebhook);
  }

  /** Queues again an attempt that found no free slot. */
  private defer(job: AttemptJob): Promise<void> {
    return this.opts.queue.push(job, this.struggling.has(job.webhook_id) ? STRUGGLING_DEFER_MS : DEFER_MS);
  }

  /** Queues again an attempt another copy holds, giving the slot back first. */
  private putOff(job: AttemptJob, release: () => void): Promise<void> {
    release();
    return this.opts.queue.push(job, CLAIMED_DEFER_MS);
  }

  /** An attempt within its slot: claimed before the "already made?" reads, so they and the POST are one step among copies. */
  private async claimed(job: AttemptJob, release: () => void): Promise<void> {
    const claim = await this.opts.deliveries.claimAttempt(job.delivery_id, job.attempt);
    if (!claim) return this.putOff(job, release);
    try {
      const loaded = await this.load(job);
      if (!loaded) return;
      const { delivery, webhook, made } = loaded;
      // The fan-out that stored the delivery may be making this attempt under the delivery's claim.
      if (firstClaimHeld(delivery, job)) return await this.putOff(job, release);
      // Made and recorded by a copy that died before storing the delivery's outcome: finish from that record.
      if (made) {
        release();
        return await this.record(delivery, webhook, job, made);
      }
      await this.send(job, { delivery, webhook }, claim.exclusiveUntil, release);
    } finally {
      // Given up once the outcome is stored (a copy then finds the attempt made), when nothing was
      // sent, or when storing failed (the job's retry finds the attempt record, or sends again).
      // Only a holder that dies leaves its claim, which then runs out.
      await claim.release().catch(() => {});
    }
  }

  /** The signed POST of an attempt claimed until `exclusiveUntil` (ms since the epoch), and its outcome stored. */
  private async send(job: AttemptJob, { delivery, webhook }: Target, exclusiveUntil: number, release: () => void): Promise<void> {
    // The reads took so long that the POST could outlive the claim: give it up and come back.
    if (Date.now() + this.opts.sendTimeoutMs > exclusiveUntil) return this.putOff(job, release);
    const headers = signatureHeaders(this.opts.box.open(webhook.secret_sealed), delivery.event_id, delivery.body);
    const result = await this.opts.sender.send(webhook.url, delivery.body, headers);
    if (result.ok) this.struggling.delete(webhook._id);
    else this.struggling.add(webhook._id);
    release();
    await this.record(delivery, webhook, job, attemptRecord(delivery, job, result));
  }

  /** The delivery and webhook of a claimed attempt, or null when the attempt is not owed (made already, or its webhook gone or inactive). */
  private async load(job: AttemptJob): Promise<Loaded | null> {
    const delivery = await this.opts.deliveries.get(job.delivery_id);
    // A job for an attempt already made (a redelivery, a duplicate from fan-out) is dropped.
    if (!delivery || delivery.status !== 'pending' || delivery.attempts_count + 1 !== job.attempt) return null;
    const webhook = await this.opts.webhooks.byId(delivery.webhook_id);
    if (!webhook || !webhook.active) {
      await this.opts.deliveries.skip(delivery._id);
      return null;
    }
    return { delivery, webhook, made: await this.opts.deliveries.attemptById(attemptId(delivery._id, job.attempt)) };
  }

  private async record(delivery: DeliveryRecord, webhook: WebhookRecord, job: AttemptJob, attempt: AttemptRecord): Promise<void> {
    // Recorded before a crash (or by a duplicate job): finish from what was recorded.
    const result = await this.opts.deliveries.recordAttempt(attempt);
    // The webhook's counters, once per attempt however often this runs (countAttempts); before the
    // outcome, so a crash repeats it. While a count of the webhook runs here, one more follows it and
    // this goes on; what a busy lock or a crash leaves is counted by the next run or the sweep.
    await this.counts.request(webhook._id, () => this.opts.webhooks.countAttempts(webhook._id, { wait: false }));
    const at = result.at;
    const delay = this.opts.retryDelaysMs[job.attempt - 1];
    const after = result.ok ? { inactive: false, deactivatedNow: false } : await this.opts.deactivation.afterFailure(webhook);
    const retry = !result.ok && !job.manual && delay !== undefined && !after.inactive;
    await this.opts.deliveries.recordOutcome(delivery._id, {
      status: result.ok ? 'succeeded' : retry ? 'pending' : 'failed',
      attempts_count: job.attempt,
      last_attempt_at: at,
      next_attempt_at: retry ? new Date(at.getTime() + delay) : null,
    });
    if (retry) await this.opts.queue.push({ delivery_id: delivery._id, webhook_id: webhook._id, team_id: delivery.team_id, attempt: job.attempt + 1 }, delay);
    if (after.deactivatedNow) await this.opts.deactivation.sendAlert(webhook._id);
  }
}

/**
 * A delivery of `event` to a webhook, pending its first attempt: the body fixed here
 * for every attempt; its first attempt claimed until `firstClaimUntil` when given.
 */
export function newDelivery(event: DomainEvent, webhookId: string, now: Date, firstClaimUntil: Date | null = null): DeliveryRecord {
  return {
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
    first_claim_until: firstClaimUntil,
  };
}

/** Attempt 1 of a delivery whose fan-out stored it claiming that attempt, while the claim holds. */
function firstClaimHeld(delivery: DeliveryRecord, job: AttemptJob): boolean {
  return job.attempt === 1 && (delivery.first_claim_until?.getTime() ?? 0) > Date.now();
}

function attemptRecord(delivery: DeliveryRecord, job: AttemptJob, sent: SendResult): AttemptRecord {
  return {
    _id: attemptId(delivery._id, job.attempt),
    team_id: delivery.team_id,
    webhook_id: delivery.webhook_id,
    delivery_id: delivery._id,
    attempt: job.attempt,
    at: new Date(),
    ok: sent.ok,
    status_code: sent.statusCode,
    latency_ms: Math.round(sent.latencyMs),
    error_class: sent.errorClass,
    response_body: sent.responseBody,
  };
}
