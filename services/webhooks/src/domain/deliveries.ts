// From domain events to signed POSTs. A domain event becomes one delivery per
// subscribed, active webhook. The fan-out makes each first attempt itself,
// concurrently across the webhooks (each within its slots), with the webhook and
// the body it has in memory, and then counts the attempt and stores the delivery
// with its outcome (and the attempt inside it when it succeeded, or else in
// `attempts`): an insert each, grouped with the others under way (InsertBatcher),
// so the store sees a round trip for many deliveries. The event is acked once they
// are stored: a crash before that redelivers it, and its first attempts are made
// again (at least once). A delivery's id is derived from its webhook and event, so
// a copy of an event finds what an earlier copy stored: it reads first only when the
// broker says an earlier copy may have run (a redelivery or a retry), and else the
// store refuses the duplicate. A webhook without a free slot gets its delivery
// stored pending and its first attempt queued. A failed attempt is queued again
// after the delay of its tier (WEBHOOK_RETRY_DELAYS); the body and the event id are
// the same on every attempt. Jobs are acked only after their outcome is stored, so
// a crash repeats an attempt but never loses one; each queued attempt is claimed
// before its "already made?" check and its POST, so copies of one job running at
// once (a redelivery, a requeue, two replicas) send it once. The webhooks'
// counters are not kept here: CounterFold adds the attempts to them in bulk.
import type { DomainEvent } from '@lpm/shared/events';
import { countsInLog, type DeliveriesRepository, type Outcome } from '../data/deliveries-repository.ts';
import type { AttemptRecord, DeliveryRecord, WebhookRecord } from '../data/webhook-entity.ts';
import type { WebhooksRepository } from '../data/webhooks-repository.ts';
import type { SendResult } from '../upstream/webhook-sender.ts';
import type { Deactivation } from './deactivation.ts';
import { nextDelay } from './delay-tiers.ts';
import { countAttempt } from './delivery-metrics.ts';
import { attemptId, attemptRecord, newDelivery } from './delivery-records.ts';
import { RateTurns, type RateReserver } from './rate-turns.ts';
import type { SecretBox } from './secret-box.ts';
import { SigningKeyCache } from './signing-key-cache.ts';
import { CLAIMED_DEFER_MS } from './slot-timing.ts';
import { signatureHeaders } from './signing.ts';
import { WebhookSlots, type WebhookSlotsOptions } from './webhook-slots.ts';
import { ALL_EVENTS } from './webhooks.ts';

export const ATTEMPT_JOB = 'webhooks.attempt';
/** Secrets' signing keys kept in memory (a webhook's current one and those of its previous ones still live). */
const KEYS_KEPT = 10_000;
/** Room beyond the send's deadline in a claim: for the reads before the POST and the insert of its outcome after it. */
export const ATTEMPT_CLAIM_MARGIN_MS = 15_000;

/** How long an attempt's claim is exclusive at least, for a sender whose POST ends within `sendTimeoutMs`. */
export function attemptClaimMs(sendTimeoutMs: number, marginMs = ATTEMPT_CLAIM_MARGIN_MS): number {
  return sendTimeoutMs + marginMs;
}

export interface AttemptJob {
  delivery_id: string;
  webhook_id: string;
  team_id: string;
  attempt: number;
  /** Asked for through the API: no automatic retries follow it. */
  manual?: boolean;
  /** The webhook's rate-limit turn this attempt reserved (ms since the epoch): it is made no sooner. */
  not_before?: number;
}

/** Where attempt jobs go (a WorkQueue<AttemptJob>). */
export interface AttemptQueue {
  push(job: AttemptJob, delayMs?: number): Promise<void>;
}

/** A claimed attempt's delivery and webhook, and the attempt's record when a copy made it already. */
interface Loaded {
  delivery: DeliveryRecord;
  webhook: WebhookRecord;
  made: AttemptRecord | null;
}

/** With the webhooks' slots and the process's POST permits (WebhookSlotsOptions). */
export interface DeliveriesOptions extends WebhookSlotsOptions {
  webhooks: WebhooksRepository;
  deliveries: DeliveriesRepository;
  queue: AttemptQueue;
  sender: { send(url: string, body: string, headers: Record<string, string>): Promise<SendResult> };
  box: SecretBox;
  deactivation: Deactivation;
  /** Delays before attempts 2..n. */
  retryDelaysMs: number[];
  /** The sender's deadline for one POST: a claimed attempt is sent only when it ends before the claim can be taken over. */
  sendTimeoutMs: number;
  /** Turns of webhooks with a rate_limit, across replicas; without it, limits are not kept. */
  rates?: RateReserver;
}

export class Deliveries {
  private readonly opts: DeliveriesOptions;
  private readonly slots: WebhookSlots;
  private readonly keys: SigningKeyCache;
  private readonly turns: RateTurns;

  constructor(opts: DeliveriesOptions) {
    this.opts = opts;
    this.turns = new RateTurns(opts.rates);
    this.slots = new WebhookSlots(opts);
    this.keys = new SigningKeyCache(opts.box, KEYS_KEPT);
  }

  get maxAttempts(): number {
    return this.opts.retryDelaysMs.length + 1;
  }

  /**
   * A domain event in: one delivery per subscribed webhook (kept skipped for an inactive one), and its first attempt
   * made here, concurrently across the webhooks (each within its own slots). Every
   * webhook's attempt is stored or queued before this resolves (and the event is
   * acked). `fresh`: the broker's first delivery of the event, which no copy can
   * have handled before (a copy published twice is sent twice: at least once).
   */
  async fanOut(event: DomainEvent, fresh = false): Promise<void> {
    const webhooks = await this.opts.webhooks.subscribedAll(event.team_id, event.type, ALL_EVENTS, event.created_at);
    const outcomes = await Promise.allSettled(
      webhooks.map((w) => (w.active ? this.deliverFirst(event, w, fresh) : this.keepSkipped(event, w))),
    );
    const failed = outcomes.find((o) => o.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** An event for an inactive webhook: its delivery kept as skipped, so a recovery can send it later. */
  private keepSkipped(event: DomainEvent, webhook: WebhookRecord): Promise<void> {
    return this.opts.deliveries.insertSkipped({
      ...newDelivery(event, webhook._id, new Date()),
      status: 'skipped',
      next_attempt_at: null,
    });
  }

  private async deliverFirst(event: DomainEvent, webhook: WebhookRecord, fresh: boolean): Promise<void> {
    const delivery = newDelivery(event, webhook._id, new Date());
    const job: AttemptJob = { delivery_id: delivery._id, webhook_id: webhook._id, team_id: event.team_id, attempt: 1 };
    if (!fresh) {
      const stored = await this.opts.deliveries.get(delivery._id);
      if (stored) {
        // An earlier copy stored it: its attempts go on from the queue. Its first may still be owed,
        // if that copy died before queueing it: a second job is dropped by the attempt's claim and check.
        if (stored.status === 'pending' && stored.attempts_count === 0) await this.opts.queue.push(job);
        return;
      }
    }
    // A paced webhook's attempts are all made from the queue, where each is admitted just before its POST
    // (rate-turns.ts): stored pending, its attempt queued to wait for its turn (the event is not held meanwhile).
    if (this.turns.owes(job, webhook)) return this.waitTurn(delivery, await this.turns.reserve(job, webhook));
    const release = await this.slots.slot(webhook._id);
    if (!release) {
      // A duplicate was stored by an earlier copy, which queued its attempt.
      if ((await this.opts.deliveries.insert(delivery)) === 'inserted') await this.defer(job);
      return;
    }
    try {
      const made = await this.post(job, delivery, webhook, release);
      // A success goes inside its delivery; a failure is recorded first (a delivery stored failed has its attempt).
      const attempt = made.ok ? made : await this.opts.deliveries.attempts.recordAttempt(made, delivery.created_at);
      const next = await this.next(webhook, delivery, job, attempt);
      const stored = { ...delivery, ...next.outcome, updated_at: attempt.at };
      const inserted = made.ok
        ? await this.opts.deliveries.insertWithFirstAttempt(stored, made)
        : await this.opts.deliveries.insert(stored);
      // A duplicate: an earlier copy stored the delivery (pending, its queued job then finds this attempt made).
      if (inserted === 'duplicate') return;
      await this.followUp(delivery, webhook, job, next);
    } finally {
      release();
    }
  }

  /** Stores a new delivery pending and queues its first attempt (a test send). */
  async sendNew(delivery: DeliveryRecord): Promise<void> {
    await this.opts.deliveries.insert(delivery);
    await this.opts.queue.push(nextAttempt(delivery));
  }

  private async waitTurn(delivery: DeliveryRecord, turn: { job: AttemptJob; waitMs: number }): Promise<void> {
    const due = { ...delivery, next_attempt_at: new Date(Date.now() + turn.waitMs) };
    if ((await this.opts.deliveries.insert(due)) === 'inserted')
      await this.opts.queue.push(turn.job, this.turns.queueDelay(turn.waitMs));
  }

  /** Queues one more attempt of a delivery now (the API's retry, or a recovery's, named by `recoveryId`). */
  async retryNow(delivery: DeliveryRecord, recoveryId?: string): Promise<void> {
    await this.opts.deliveries.markPending(delivery._id, new Date(), recoveryId);
    await this.queueRetry(delivery);
  }

  /** Queues retryNow's attempt of a delivery it made pending again (its process died between the two); a copy is dropped by the attempt check. */
  async queueRetry(delivery: DeliveryRecord): Promise<void> {
    await this.opts.queue.push({ ...nextAttempt(delivery), manual: true });
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
      await this.opts.queue.push(nextAttempt(d));
    });
  }

  /** Drops the claims that holders which died left behind (the maintenance job). */
  sweepClaims(): Promise<number> {
    return this.opts.deliveries.claims.dropExpiredClaims();
  }

  /**
   * An attempt job in: the attempt claimed, a signed POST, its outcome stored, and
   * the next attempt queued if one is owed. A copy that finds the attempt claimed
   * comes back later; by then it was made (and the copy is dropped) or its holder
   * died and the claim is over (and the copy makes it). A crash after the POST and
   * before its outcome is stored still repeats the POST (at least once).
   */
  async attempt(job: AttemptJob): Promise<void> {
    if (
      job.not_before !== undefined &&
      !(await this.turns.arrived(job, (j, delayMs) => this.opts.queue.push(j, delayMs)))
    )
      return;
    // The slot comes first, before any store read, so a busy webhook's waiting jobs cost little.
    const release = await this.slots.slot(job.webhook_id);
    if (!release) return this.defer(job);
    try {
      await this.claimed(job, release);
    } finally {
      release();
    }
  }

  /** Queues again an attempt that found no free slot. */
  private defer(job: AttemptJob): Promise<void> {
    return this.opts.queue.push(job, this.slots.deferMs(job.webhook_id));
  }

  /** Queues again an attempt another copy holds, giving the slot back first. */
  private putOff(job: AttemptJob, release: () => void): Promise<void> {
    release();
    return this.opts.queue.push(job, CLAIMED_DEFER_MS);
  }

  /** An attempt within its slot: claimed before the "already made?" reads, so they and the POST are one step among copies. */
  private async claimed(job: AttemptJob, release: () => void): Promise<void> {
    const claim = await this.opts.deliveries.claims.claimAttempt(job.delivery_id, job.attempt);
    if (!claim) return this.putOff(job, release);
    try {
      const loaded = await this.load(job);
      if (!loaded) return;
      const { delivery, webhook, made } = loaded;
      if (!made && this.turns.owes(job, webhook)) {
        const turn = await this.turns.reserve(job, webhook);
        if (turn.waitMs > 0) {
          release();
          return await this.opts.queue.push(turn.job, this.turns.queueDelay(turn.waitMs));
        }
      }
      // The reads took so long that the POST could outlive the claim: give it up and come back.
      const latest = claim.exclusiveUntil - this.opts.sendTimeoutMs;
      if (!made && Date.now() > latest) return await this.putOff(job, release);
      // Made and recorded by a copy that died before storing the delivery's outcome: finished from that record.
      if (made) release();
      const posted = made ?? (await this.postAdmitted(job, delivery, webhook, release, latest));
      if (typeof posted === 'number') {
        // Its rate limit's next spacing ends after the claim's: back to the queue to wait there.
        release();
        return await this.opts.queue.push(job, this.turns.queueDelay(posted));
      }
      const logged = job.attempt === 1 && !job.manual && countsInLog(delivery) ? delivery.created_at : null;
      const attempt = made ?? (await this.opts.deliveries.attempts.recordAttempt(posted, logged));
      const next = await this.next(webhook, delivery, job, attempt);
      await this.opts.deliveries.recordOutcome(delivery._id, next.outcome);
      await this.followUp(delivery, webhook, job, next);
    } finally {
      // Given up once the outcome is stored (a copy then finds the attempt made), when nothing was
      // sent, or when storing failed (the job's retry finds the attempt record, or sends again).
      // Only a holder that dies leaves its claim, which then runs out.
      await claim.release().catch(() => {});
    }
  }

  /** The signed POST of an attempt, its slot given back once the answer is in. */
  private async post(
    job: AttemptJob,
    delivery: DeliveryRecord,
    webhook: WebhookRecord,
    release: () => void,
  ): Promise<AttemptRecord> {
    return this.posted(job, delivery, await this.slots.post(webhook._id, this.signedPost(delivery, webhook)), release);
  }

  /** As `post`, admitted first by the webhook's rate limit, if it has one (rate-turns.ts): else how long to wait (ms) from `latest` on. */
  private async postAdmitted(
    job: AttemptJob,
    delivery: DeliveryRecord,
    webhook: WebhookRecord,
    release: () => void,
    latest: number,
  ): Promise<AttemptRecord | number> {
    if (!this.turns.paces(webhook)) return this.post(job, delivery, webhook, release);
    const send = this.signedPost(delivery, webhook);
    const result = await this.turns.admitted(webhook, latest, (admit) => this.slots.post(webhook._id, send, admit));
    return typeof result === 'number' ? result : this.posted(job, delivery, result, release);
  }

  private signedPost(delivery: DeliveryRecord, webhook: WebhookRecord): () => Promise<SendResult> {
    return () => {
      const headers = signatureHeaders(this.keys.keysOf(webhook), delivery.event_id, delivery.body);
      return this.opts.sender.send(webhook.url, delivery.body, headers);
    };
  }

  private posted(job: AttemptJob, delivery: DeliveryRecord, result: SendResult, release: () => void): AttemptRecord {
    countAttempt(delivery._id, result);
    release();
    return attemptRecord(delivery, job.attempt, result);
  }

  /** The delivery and webhook of a claimed attempt, or null when the attempt is not owed (made already, or its webhook gone or inactive). */
  private async load(job: AttemptJob): Promise<Loaded | null> {
    const delivery = await this.opts.deliveries.get(job.delivery_id);
    // A job for an attempt already made (a redelivery, a duplicate from fan-out) is dropped.
    if (!delivery || delivery.status !== 'pending' || delivery.attempts_count + 1 !== job.attempt) return null;
    const webhook = await this.opts.webhooks.byId(delivery.webhook_id);
    if (!webhook || !webhook.active) {
      await this.opts.deliveries.skip(delivery);
      return null;
    }
    return {
      delivery,
      webhook,
      made: await this.opts.deliveries.attempts.attemptById(attemptId(delivery._id, job.attempt)),
    };
  }

  /** What a recorded attempt makes of its delivery: done, failed for good, or pending its next attempt (and whether it deactivated the webhook). */
  private async next(
    webhook: WebhookRecord,
    delivery: DeliveryRecord,
    job: AttemptJob,
    attempt: AttemptRecord,
  ): Promise<Next> {
    const scheduled = this.opts.retryDelaysMs[job.attempt - 1];
    const after = await this.afterAttempt(webhook, attempt);
    const owed = !attempt.ok && !job.manual && !delivery.test && scheduled !== undefined && !after.inactive;
    const retryAfterMs = owed
      ? nextDelay(scheduled, this.opts.retryDelaysMs, attempt.status_code, attempt.retry_after_ms)
      : null;
    const outcome: Outcome = {
      status: attempt.ok ? 'succeeded' : retryAfterMs !== null ? 'pending' : 'failed',
      attempts_count: job.attempt,
      last_attempt_at: attempt.at,
      next_attempt_at: retryAfterMs !== null ? new Date(attempt.at.getTime() + retryAfterMs) : null,
    };
    return { outcome, retryAfterMs, deactivatedNow: after.deactivatedNow };
  }

  /**
   * Whether an attempt leaves the webhook inactive: a 410 Gone deactivates it at once.
   * Other failures count toward the failures in a row, which the counter fold adds
   * up and checks (Deactivation.afterFailures).
   */
  private afterAttempt(
    webhook: WebhookRecord,
    attempt: AttemptRecord,
  ): Promise<{ inactive: boolean; deactivatedNow: boolean }> {
    if (!attempt.ok && attempt.status_code === 410) return this.opts.deactivation.afterGone(webhook);
    return Promise.resolve({ inactive: false, deactivatedNow: false });
  }

  /** Once the outcome is stored: the next attempt queued, and the alert of a webhook this attempt deactivated. */
  private async followUp(delivery: DeliveryRecord, webhook: WebhookRecord, job: AttemptJob, next: Next): Promise<void> {
    if (next.retryAfterMs !== null) {
      await this.opts.queue.push(
        { delivery_id: delivery._id, webhook_id: webhook._id, team_id: delivery.team_id, attempt: job.attempt + 1 },
        next.retryAfterMs,
      );
    }
    if (next.deactivatedNow) await this.opts.deactivation.sendAlert(webhook._id);
  }
}

interface Next {
  outcome: Outcome;
  /** The delay before the next attempt, or null when none is owed. */
  retryAfterMs: number | null;
  deactivatedNow: boolean;
}

/** The job of a stored delivery's next attempt. */
function nextAttempt(d: DeliveryRecord): AttemptJob {
  return { delivery_id: d._id, webhook_id: d.webhook_id, team_id: d.team_id, attempt: d.attempts_count + 1 };
}
