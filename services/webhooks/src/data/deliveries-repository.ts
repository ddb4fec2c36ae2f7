// Deliveries (one event for one webhook, its body fixed once) and their attempts.
// An attempt's id is `<delivery>:<n>`, so each attempt is recorded once however
// often its job runs; and an attempt is claimed before it is sent, so it is sent
// once however many copies of its job run at the same moment.
import type { Db } from 'mongodb';
import { pageWindow, parseSort, type ListQuery } from '@lpm/shared/http/pagination';
import { insertOrGet, isDuplicateKey } from '@lpm/shared/store/duplicate-key';
import { escapeRegex } from '@lpm/shared/text';
import type { AttemptClaimRecord, AttemptRecord, DeliveryRecord, DeliveryStatus } from './webhook-entity.ts';

export interface Outcome {
  status: DeliveryStatus;
  attempts_count: number;
  last_attempt_at: Date;
  next_attempt_at: Date | null;
}

/** Delivery ids per query when their attempt claims are dropped (one anchored regex over `_id` each). */
const CLAIM_BATCH = 200;

/**
 * Drops the history of these webhooks: attempt claims, attempts, deliveries (the
 * webhook itself is deleted before, so a crash in between leaves orphans that
 * DeliveriesRepository.purgeOrphans removes). Every step is a delete, so running it
 * twice, or on several replicas at once, does no harm.
 */
export async function dropWebhookHistory(db: Db, webhookIds: string[]): Promise<void> {
  if (webhookIds.length === 0) return;
  const deliveries = db.collection<DeliveryRecord>('deliveries');
  const ids = (await deliveries.find({ webhook_id: { $in: webhookIds } }, { projection: { _id: 1 } }).toArray()).map((d) => d._id);
  await dropClaimsOf(db, ids);
  await db.collection<AttemptRecord>('attempts').deleteMany({ webhook_id: { $in: webhookIds } });
  await deliveries.deleteMany({ webhook_id: { $in: webhookIds } });
}

/** Claims are `<delivery>:<attempt>:<slot>`: dropped by a prefix of their `_id`. */
async function dropClaimsOf(db: Db, deliveryIds: string[]): Promise<void> {
  const claims = db.collection<AttemptClaimRecord>('attempt_claims');
  for (let i = 0; i < deliveryIds.length; i += CLAIM_BATCH) {
    const alternatives = deliveryIds.slice(i, i + CLAIM_BATCH).map(escapeRegex).join('|');
    await claims.deleteMany({ _id: { $regex: `^(?:${alternatives}):` } });
  }
}

/** Attempt n of a delivery, held by one sender. */
export interface AttemptClaim {
  /** Until this instant (ms since the epoch) no other copy can claim the attempt: the holder's send and record must be done by then. */
  readonly exclusiveUntil: number;
  /** Gives the claim up (once the outcome is stored, or nothing was sent). */
  release(): Promise<void>;
}

export interface DeliveriesRepositoryOptions {
  /**
   * How long a claim on an attempt is exclusive at least (at most twice this: the
   * time slots below). A claim whose holder died is taken over after that.
   */
  attemptClaimMs: number;
}

export class DeliveriesRepository {
  private readonly db: Db;
  private readonly claimMs: number;

  constructor(db: Db, opts: DeliveriesRepositoryOptions) {
    this.db = db;
    this.claimMs = opts.attemptClaimMs;
  }

  private get deliveries() {
    return this.db.collection<DeliveryRecord>('deliveries');
  }

  private get attempts() {
    return this.db.collection<AttemptRecord>('attempts');
  }

  private get claims() {
    return this.db.collection<AttemptClaimRecord>('attempt_claims');
  }

  /**
   * Claims attempt `attempt` of a delivery for this caller, or null when another
   * holds it. FerretDB makes only a unique insert atomic, so a claim is inserts, as
   * the document lock is (shared store/lock.ts): time slots of attemptClaimMs, the
   * current and the next, `<delivery>:<attempt>:<slot>`. Both inserts succeed for
   * one caller only, and holding both covers at least attemptClaimMs from now. A
   * holder that dies leaves them; they bar the attempt until the slots have passed
   * (at most twice attemptClaimMs), and no later claim reuses them, so a takeover
   * needs no delete or update.
   */
  async claimAttempt(deliveryId: string, attempt: number): Promise<AttemptClaim | null> {
    const period = this.claimMs;
    const slot = Math.floor(Date.now() / period);
    const taken: string[] = [];
    for (const s of [slot, slot + 1]) {
      const id = `${deliveryId}:${attempt}:${s}`;
      try {
        await this.claims.insertOne({ _id: id, expires_at: new Date((s + 1) * period) });
        taken.push(id);
      } catch (e) {
        if (taken.length) await this.claims.deleteMany({ _id: { $in: taken } }).catch(() => {});
        if (isDuplicateKey(e)) return null;
        throw new Error(`claim of attempt ${attempt} of ${deliveryId} failed`, { cause: e });
      }
    }
    return {
      exclusiveUntil: (slot + 2) * period,
      release: async () => {
        await this.claims.deleteMany({ _id: { $in: taken } });
      },
    };
  }

  /** Drops the claims of holders that died (their slots are over, so no claim can take those ids again). */
  async dropExpiredClaims(now = new Date()): Promise<number> {
    const res = await this.claims.deleteMany({ expires_at: { $lt: new Date(now.getTime() - this.claimMs) } });
    return res.deletedCount;
  }

  /** Stores the delivery, or gives back the one already stored for its webhook and event. */
  insertOrGet(delivery: DeliveryRecord): Promise<DeliveryRecord> {
    return insertOrGet(this.deliveries, delivery, { webhook_id: delivery.webhook_id, event_id: delivery.event_id });
  }

  get(id: string): Promise<DeliveryRecord | null> {
    return this.deliveries.findOne({ _id: id });
  }

  findForWebhook(teamId: string, webhookId: string, id: string): Promise<DeliveryRecord | null> {
    return this.deliveries.findOne({ _id: id, webhook_id: webhookId, team_id: teamId });
  }

  /** One page of a webhook's deliveries (without their bodies), newest first by default. */
  async page(teamId: string, webhookId: string, q: ListQuery): Promise<{ records: DeliveryRecord[]; total: number }> {
    const { skip, limit } = pageWindow(q);
    const { direction } = parseSort(q.sort, '-created_at');
    const filter = { webhook_id: webhookId, team_id: teamId };
    const [records, total] = await Promise.all([
      this.deliveries.find<DeliveryRecord>(filter, { projection: { body: 0 } }).sort({ created_at: direction, _id: direction }).skip(skip).limit(limit).toArray(),
      this.deliveries.countDocuments(filter),
    ]);
    return { records, total };
  }

  async markPending(id: string, now: Date): Promise<void> {
    await this.deliveries.updateOne({ _id: id }, { $set: { status: 'pending', next_attempt_at: now, updated_at: now } });
  }

  async skip(id: string): Promise<void> {
    await this.deliveries.updateOne({ _id: id, status: 'pending' }, { $set: { status: 'skipped', next_attempt_at: null, updated_at: new Date() } });
  }

  async recordOutcome(id: string, o: Outcome): Promise<void> {
    await this.deliveries.updateOne({ _id: id }, { $set: { ...o, updated_at: o.last_attempt_at } });
  }

  /** Pending deliveries whose next attempt was due before `before`. */
  stuck(before: Date, limit: number): Promise<DeliveryRecord[]> {
    return this.deliveries.find({ status: 'pending', next_attempt_at: { $lt: before } }).limit(limit).toArray();
  }

  /** Moves a stuck delivery's next attempt to `now`, unless an attempt was recorded meanwhile. */
  async requeued(d: DeliveryRecord, now: Date): Promise<void> {
    await this.deliveries.updateOne({ _id: d._id, attempts_count: d.attempts_count }, { $set: { next_attempt_at: now } });
  }

  /** The attempt recorded with this id (`<delivery>:<n>`), if any. */
  attemptById(id: string): Promise<AttemptRecord | null> {
    return this.attempts.findOne({ _id: id });
  }

  /**
   * Stores an attempt, not yet counted in its webhook's counters (WebhooksRepository.countAttempts
   * counts it and marks it), or gives back the one recorded before (a crash or a duplicate job).
   */
  recordAttempt(attempt: AttemptRecord): Promise<AttemptRecord> {
    return insertOrGet(this.attempts, { ...attempt, counted: false }, { _id: attempt._id });
  }

  /**
   * Retention: drops attempts made, and deliveries last changed, before `cutoff`.
   * Range filters (FerretDB reads the collection and filters in Go: this runs
   * rarely, off the request path). Deletes only, so it is safe to run on several
   * replicas at once and needs no exactly-once claim.
   */
  async purgeOlderThan(cutoff: Date): Promise<{ deliveries: number; attempts: number }> {
    const attempts = await this.attempts.deleteMany({ at: { $lt: cutoff } });
    const deliveries = await this.deliveries.deleteMany({ updated_at: { $lt: cutoff } });
    return { deliveries: deliveries.deletedCount, attempts: attempts.deletedCount };
  }

  /**
   * Drops deliveries and attempts of webhooks not in `existing` (a crash between a
   * webhook's delete and its history's, or an attempt recorded as it was deleted).
   * Only records made before `listedBefore`, the instant before `existing` was read:
   * a webhook created since then may already have deliveries.
   */
  async purgeOrphans(existing: string[], listedBefore: Date): Promise<{ deliveries: number; attempts: number }> {
    const attempts = await this.attempts.deleteMany({ webhook_id: { $nin: existing }, at: { $lt: listedBefore } });
    const deliveries = await this.deliveries.deleteMany({ webhook_id: { $nin: existing }, created_at: { $lt: listedBefore } });
    return { deliveries: deliveries.deletedCount, attempts: attempts.deletedCount };
  }

  /** The attempts of these deliveries that their webhook's counters include (the log and the counters agree). */
  attemptsOf(deliveryIds: string[]): Promise<AttemptRecord[]> {
    if (deliveryIds.length === 0) return Promise.resolve([]);
    return this.attempts.find({ delivery_id: { $in: deliveryIds }, counted: { $ne: false } }).sort({ attempt: 1 }).toArray();
  }

  /** Whether each of the webhook's last `n` attempts since `since` succeeded, newest first. */
  async recentOutcomes(webhookId: string, since: Date, n: number): Promise<boolean[]> {
    const rows = await this.attempts.find({ webhook_id: webhookId, at: { $gte: since } }, { projection: { ok: 1 } }).sort({ at: -1 }).limit(n).toArray();
    return rows.map((a) => a.ok);
  }
}
