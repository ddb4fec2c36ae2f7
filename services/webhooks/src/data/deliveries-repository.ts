// Deliveries (one event for one webhook, its body fixed once) and their attempts.
// An attempt's id is `<delivery>:<n>`, so each attempt is recorded once however
// often its job runs; and a queued attempt is claimed before it is sent (claim
// documents), so it is sent once however many copies of its job run at the same
// moment. A first attempt that succeeded in the fan-out is kept inside its
// delivery (`first_attempt`), so the common delivery is one document; every other
// attempt is a document of `attempts`. Deliveries and attempts are inserted in
// groups (InsertBatcher): the fan-out's many inserts at once cost the store a
// round trip a group.
import { randomUUID } from 'node:crypto';
import type { Db } from 'mongodb';
import { pageWindow, parseSort, type ListQuery } from '@lpm/shared/http/pagination';
import { readBucketPage } from '@lpm/shared/store/bucket-pages';
import { InsertBatcher, type InsertOutcome } from '@lpm/shared/store/insert-batcher';
import { takeTimeSlots, type SlotDoc } from '@lpm/shared/store/lock';
import { escapeRegex } from '@lpm/shared/text';
import { bucketOf, ownedBy, purgeByMarker, sweepBuckets } from '@lpm/shared/store/markers';
import { SWEEP } from '@lpm/shared/store/time-budgets';
import { DAY_MS } from '@lpm/shared/time';
import { DeliveryLogCounts, logMarkers, minuteMarker, type MinuteCounts } from './delivery-log-counts.ts';
import type { AttemptClaimRecord, AttemptRecord, AttemptTallyRecord, DeliveryRecord, DeliveryStatus, FirstAttempt, WebhookCountersRecord, WebhookRecoveryRecord } from './webhook-entity.ts';

/** What a page of the log may be narrowed to. */
export interface LogMatch {
  status?: DeliveryStatus;
  event_type?: string;
  event_id?: string;
}

export interface Outcome {
  status: DeliveryStatus;
  attempts_count: number;
  last_attempt_at: Date;
  next_attempt_at: Date | null;
}

/** Delivery ids per query when their attempt claims are dropped (one anchored regex over `_id` each). */
const CLAIM_BATCH = 200;
/** The size of the buckets of `due_minute`, the rescue's marker. */
const DUE_BUCKET_MS = 60_000;
/** The most overdue deliveries the rescue's range query visits in one run. */
const RANGE_LIMIT = 500;

/** The markers that go with a delivery's updated_at and next_attempt_at (@lpm/shared/store/markers). */
const updatedDay = (updatedAt: Date) => ({ updated_day: bucketOf(updatedAt, DAY_MS) });
const dueMinute = (nextAttemptAt: Date | null) => ({ due_minute: nextAttemptAt && bucketOf(nextAttemptAt, DUE_BUCKET_MS) });

/** How long an attempt's record waits for others to go with it in one insert. */
const RECORD_LINGER_MS = 20;

/** What retention, the rescue and the claims sweep remove or visit. */
export interface Purged {
  deliveries: number;
  attempts: number;
}

/**
 * Drops the history of a deleted webhook: attempt claims, attempts, deliveries, counters and tallies (the
 * webhook's tombstone is written before it is deleted, so retention repeats this
 * after a crash in between). Every step is a delete by equality, so running it
 * twice, or on several replicas at once, does no harm.
 */
export async function dropWebhookHistory(db: Db, webhookId: string): Promise<Purged> {
  const deliveries = db.collection<DeliveryRecord>('deliveries');
  const ids = (await deliveries.find({ webhook_id: webhookId }, { projection: { _id: 1 }, ...SWEEP }).toArray()).map((d) => d._id);
  await dropClaimsOf(db, ids);
  const attempts = await db.collection<AttemptRecord>('attempts').deleteMany({ webhook_id: webhookId }, SWEEP);
  const dropped = await deliveries.deleteMany({ webhook_id: webhookId }, SWEEP);
  await db.collection<AttemptTallyRecord>('attempt_tallies').deleteMany({ webhook_id: webhookId }, SWEEP);
  await db.collection<WebhookCountersRecord>('webhook_counters').deleteOne({ _id: webhookId });
  await db.collection<WebhookRecoveryRecord>('webhook_recoveries').deleteMany({ webhook_id: webhookId });
  await new DeliveryLogCounts(db).dropWebhook(webhookId);
  return { deliveries: dropped.deletedCount, attempts: attempts.deletedCount };
}

/** Claims are `<delivery>:<attempt>:<slot>`: dropped by a prefix of their `_id`. */
async function dropClaimsOf(db: Db, deliveryIds: string[]): Promise<void> {
  if (deliveryIds.length === 0) return;
  const claims = db.collection<AttemptClaimRecord>('attempt_claims');
  for (let i = 0; i < deliveryIds.length; i += CLAIM_BATCH) {
    const alternatives = deliveryIds.slice(i, i + CLAIM_BATCH).map(escapeRegex).join('|');
    await claims.deleteMany({ _id: { $regex: `^(?:${alternatives}):` } }, SWEEP);
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
  private readonly deliveryInserts: InsertBatcher<DeliveryRecord>;
  private readonly attemptInserts: InsertBatcher<AttemptRecord>;
  private readonly tallyInserts: InsertBatcher<AttemptTallyRecord>;
  private readonly logCounts: DeliveryLogCounts;

  constructor(db: Db, opts: DeliveriesRepositoryOptions) {
    this.db = db;
    this.logCounts = new DeliveryLogCounts(db);
    this.claimMs = opts.attemptClaimMs;
    // The first insert of a recorded attempt lingers a little for others; the later ones go with the callers it releases together.
    this.tallyInserts = new InsertBatcher(this.tallies, { lingerMs: RECORD_LINGER_MS });
    this.attemptInserts = new InsertBatcher(this.attempts);
    this.deliveryInserts = new InsertBatcher(this.deliveries);
  }

  private get deliveries() {
    return this.db.collection<DeliveryRecord>('deliveries');
  }

  private get attempts() {
    return this.db.collection<AttemptRecord>('attempts');
  }

  private get tallies() {
    return this.db.collection<AttemptTallyRecord>('attempt_tallies');
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
    try {
      const taken = await takeTimeSlots(this.db.collection<SlotDoc>('attempt_claims'), `${deliveryId}:${attempt}`, period, randomUUID(), (slot) => ({ slot }));
      return taken && { exclusiveUntil: (taken.slot + 2) * period, release: () => taken.release() };
    } catch (e) {
      throw new Error(`claim of attempt ${attempt} of ${deliveryId} failed`, { cause: e });
    }
  }

  /**
   * Drops the claims of holders that died, a claim period after their slot ended
   * (no claim can take those ids again): slot by slot, by the `slot` marker.
   */
  async dropExpiredClaims(now = new Date()): Promise<number> {
    const period = this.claimMs;
    // Slot s ends at (s + 1) * period: over for a period when (s + 2) * period < now.
    const upto = Math.ceil(now.getTime() / period) - 2;
    const cutoff = new Date(now.getTime() - period);
    // A cursor per period: slot numbers of another period are other buckets.
    return sweepBuckets(this.db, `sweep:attempt_claims:slot:${period}`, upto, {
      bucket: async (slot) => (await this.claims.deleteMany({ slot })).deletedCount,
      range: async () => (await this.claims.deleteMany({ expires_at: { $lt: cutoff } })).deletedCount,
    });
  }

  /** Stores the delivery, unless one is stored for its webhook and event already ('duplicate'). */
  insert(delivery: DeliveryRecord): Promise<InsertOutcome> {
    const marked = { ...delivery, ...updatedDay(delivery.updated_at), ...dueMinute(delivery.next_attempt_at), ...logMarkers(delivery.webhook_id, delivery.created_at) };
    return this.deliveryInserts.insert(marked);
  }

  /**
   * Counts a delivery's first attempt, which succeeded, and stores the delivery with
   * the attempt inside it (counted first, as recordAttempt does). When a copy stored
   * the delivery first ('duplicate'), the attempt is recorded in `attempts` instead,
   * unless that copy's delivery holds its own: a job the copy queued then finds the
   * attempt made.
   */
  async insertWithFirstAttempt(delivery: DeliveryRecord, first: AttemptRecord): Promise<InsertOutcome> {
    // A delivery stored here gets the log's markers (insert), so its first attempt counts it in the log.
    await this.countAttempt(first, delivery.created_at);
    const outcome = await this.insert({ ...delivery, first_attempt: keptInside(first) });
    if (outcome === 'duplicate' && !(await this.get(delivery._id))?.first_attempt) await this.storeAttempt(first);
    return outcome;
  }

  get(id: string): Promise<DeliveryRecord | null> {
    return this.deliveries.findOne({ _id: id });
  }

  findForWebhook(teamId: string, webhookId: string, id: string): Promise<DeliveryRecord | null> {
    return this.deliveries.findOne({ _id: id, webhook_id: webhookId, team_id: teamId });
  }

  /**
   * One page of a webhook's deliveries (without their bodies), newest first by
   * default: whole minutes skipped by their counts (delivery-log-counts.ts), then the
   * minutes the page falls in read by their markers. The plain query while the
   * webhook's deliveries are not all counted (none folded yet, or some stored before
   * the markers).
   */
  /** A page of the log; `match` narrows it to the deliveries with those values (read by a find, not the minute counts). */
  async page(teamId: string, webhookId: string, q: ListQuery, match: LogMatch = {}): Promise<{ records: DeliveryRecord[]; total: number }> {
    const window = pageWindow(q);
    const { direction } = parseSort(q.sort, '-created_at');
    const narrowed = Object.keys(match).length > 0;
    const minutes = narrowed ? null : await this.logCounts.minutesOf(webhookId);
    if (minutes) {
      const records = await this.byMinutes(teamId, webhookId, minutes, direction, window);
      const counted = [...minutes.values()].reduce((a, n) => a + n, 0);
      // The counts follow the first attempts by a fold (about a second): a page never shows fewer in all than it lists.
      return { records, total: records.length > 0 ? Math.max(counted, window.skip + records.length) : counted };
    }
    const filter = { ...match, webhook_id: webhookId, team_id: teamId };
    const [records, total] = await Promise.all([
      this.deliveries.find<DeliveryRecord>(filter, { projection: { body: 0 } }).sort({ created_at: direction, _id: direction }).skip(window.skip).limit(window.limit).toArray(),
      this.deliveries.countDocuments(filter),
    ]);
    return { records, total };
  }

  /** The page's records, minute after minute (bucket-pages.ts); a count behind its minute (a first attempt not folded yet) only moves the page's edge. */
  private byMinutes(teamId: string, webhookId: string, minutes: MinuteCounts, direction: 1 | -1, window: { skip: number; limit: number }): Promise<DeliveryRecord[]> {
    const ordered = [...minutes].filter(([, n]) => n > 0).sort(([a], [b]) => (a - b) * direction);
    return readBucketPage(ordered, ([, n]) => n, window, ([minute], skip, limit) =>
      this.deliveries.find<DeliveryRecord>({ log_minute: minuteMarker(webhookId, minute), ...ownedBy('team_id', teamId) }, { projection: { body: 0 }, sort: { created_at: direction, _id: direction }, skip, limit }).toArray(),
    );
  }

  /** Makes a delivery pending its next attempt now; `recoveryId`: the recovery re-queueing it. */
  async markPending(id: string, now: Date, recoveryId?: string): Promise<void> {
    const recovered = recoveryId ? { recovery_id: recoveryId } : {};
    await this.deliveries.updateOne({ _id: id }, { $set: { status: 'pending', next_attempt_at: now, updated_at: now, ...updatedDay(now), ...dueMinute(now), ...recovered } });
  }

  /** Keeps a delivery skipped at once (its webhook inactive), counted in the log by a tally of its skip. */
  async insertSkipped(d: DeliveryRecord): Promise<void> {
    if ((await this.insert(d)) !== 'inserted') return;
    await this.tallyInserts.insert({ _id: `${d._id}:skipped`, webhook_id: d.webhook_id, ok: true, at: d.created_at, logged: d.created_at, skipped: true });
  }

  /** Skips a pending delivery; one never attempted is counted in the log by a tally of its skip (once, by its id). */
  async skip(d: DeliveryRecord): Promise<void> {
    const now = new Date();
    if (d.attempts_count === 0 && countsInLog(d)) {
      await this.tallyInserts.insert({ _id: `${d._id}:skipped`, webhook_id: d.webhook_id, ok: true, at: now, logged: d.created_at, skipped: true });
    }
    await this.deliveries.updateOne({ _id: d._id, status: 'pending' }, { $set: { status: 'skipped', next_attempt_at: null, updated_at: now, ...updatedDay(now), ...dueMinute(null) } });
  }

  async recordOutcome(id: string, o: Outcome): Promise<void> {
    await this.deliveries.updateOne({ _id: id }, { $set: { ...o, updated_at: o.last_attempt_at, ...updatedDay(o.last_attempt_at), ...dueMinute(o.next_attempt_at) } });
  }

  /**
   * Visits each pending delivery whose next attempt was due before `before`, once
   * per time it was due: minute by minute, by the `due_minute` marker (with the
   * status), from where the last visit got to.
   */
  async visitOverdue(before: Date, visit: (d: DeliveryRecord) => Promise<void>): Promise<number> {
    const each = async (found: DeliveryRecord[]) => {
      for (const d of found) await visit(d);
      return found.length;
    };
    const withoutBody = { projection: { body: 0 } };
    return sweepBuckets(this.db, 'sweep:deliveries:due_minute', bucketOf(before, DUE_BUCKET_MS), {
      bucket: async (minute) => each(await this.deliveries.find<DeliveryRecord>({ due_minute: minute, status: 'pending' }, withoutBody).toArray()),
      range: async () => each(await this.deliveries.find<DeliveryRecord>({ status: 'pending', next_attempt_at: { $lt: before } }, withoutBody).limit(RANGE_LIMIT).toArray()),
      rangeLimit: RANGE_LIMIT,
    });
  }

  /** Moves a stuck delivery's next attempt to `now`, unless an attempt was recorded meanwhile. */
  async requeued(d: DeliveryRecord, now: Date): Promise<void> {
    await this.deliveries.updateOne({ _id: d._id, attempts_count: d.attempts_count }, { $set: { next_attempt_at: now, ...dueMinute(now) } });
  }

  /** The attempt recorded with this id (`<delivery>:<n>`), if any. */
  attemptById(id: string): Promise<AttemptRecord | null> {
    return this.attempts.findOne({ _id: id });
  }

  /**
   * Counts an attempt: its tally, which the counter fold adds to the webhook's
   * counters (once, by the attempt's id). `logged`: the created_at of the attempt's
   * delivery when this attempt counts it in the delivery log (its first, not asked
   * for through the API: `countsInLog`).
   */
  private async countAttempt(attempt: AttemptRecord, logged: Date | null): Promise<void> {
    await this.tallyInserts.insert({ _id: attempt._id, webhook_id: attempt.webhook_id, ok: attempt.ok, at: attempt.at, ...(logged && { logged }), ...(attempt.test && { test: true }) });
  }

  /**
   * Counts and stores an attempt, or gives back the one recorded before (a crash or a
   * duplicate job). The tally goes first, so a crash in between leaves an attempt
   * counted and not yet recorded, which the attempt's retry records (never one
   * recorded and not counted).
   */
  async recordAttempt(attempt: AttemptRecord, logged: Date | null = null): Promise<AttemptRecord> {
    await this.countAttempt(attempt, logged);
    return this.storeAttempt(attempt);
  }

  private async storeAttempt(attempt: AttemptRecord): Promise<AttemptRecord> {
    if ((await this.attemptInserts.insert({ ...attempt, day: bucketOf(attempt.at, DAY_MS) })) === 'inserted') return attempt;
    const stored = await this.attemptById(attempt._id);
    if (!stored) throw new Error(`attempt ${attempt._id} refused as a duplicate but not found`);
    return stored;
  }

  /**
   * Retention: drops attempts made, and deliveries last changed, before `cutoff`, by
   * their day markers (purgeByMarker). Deletes only, so it is safe to run on several
   * replicas at once and needs no exactly-once claim. `ranged`: this run also deleted
   * by range, reaching records without the markers.
   */
  async purgeOlderThan(cutoff: Date): Promise<Purged & { ranged: boolean }> {
    const attempts = await purgeByMarker(this.db, { collection: 'attempts', timeField: 'at', markerField: 'day', bucketMs: DAY_MS, before: cutoff });
    const deliveries = await purgeByMarker(this.db, { collection: 'deliveries', timeField: 'updated_at', markerField: 'updated_day', bucketMs: DAY_MS, before: cutoff });
    return { deliveries: deliveries.deleted, attempts: attempts.deleted, ranged: deliveries.ranged || attempts.ranged };
  }

  /**
   * Drops deliveries and attempts of webhooks not in `existing`: orphans that a crash
   * between a webhook's delete and its history's left before deletes wrote tombstones.
   * Every record is read (in Go on FerretDB), so this runs only while retention looks
   * for records without markers. Only records made before `listedBefore`, the instant
   * before `existing` was read: a webhook created since then may already have deliveries.
   */
  async purgeOrphans(existing: string[], listedBefore: Date): Promise<Purged> {
    const attempts = await this.attempts.deleteMany({ webhook_id: { $nin: existing }, at: { $lt: listedBefore } }, SWEEP);
    const deliveries = await this.deliveries.deleteMany({ webhook_id: { $nin: existing }, created_at: { $lt: listedBefore } }, SWEEP);
    return { deliveries: deliveries.deletedCount, attempts: attempts.deletedCount };
  }

  /**
   * The attempts of these deliveries of a webhook, by attempt number: those kept
   * inside them, and from `attempts` (the webhook by equality: the local store reads
   * only its attempts) those of the deliveries that may have more.
   */
  async attemptsOf(webhookId: string, deliveries: DeliveryRecord[]): Promise<AttemptRecord[]> {
    const inside = deliveries.flatMap((d) => (d.first_attempt ? [attemptInside(d, d.first_attempt)] : []));
    const more = deliveries.filter((d) => !d.first_attempt || d.attempts_count > 1 || d.status === 'pending').map((d) => d._id);
    const stored = more.length === 0 ? [] : await this.attempts.find({ webhook_id: webhookId, delivery_id: { $in: more } }).toArray();
    return [...inside, ...stored].sort((a, b) => a.attempt - b.attempt);
  }

  /**
   * How many of the webhook's attempts since `since` failed after its last success,
   * up to `n`. A success kept inside its delivery is found by its tally, or once
   * folded by its counters' `last_success_at`: the tallies are read first, as the
   * fold updates the counters before it deletes the tallies it added.
   */
  async failuresInARow(webhookId: string, since: Date, n: number): Promise<number> {
    // Test sends neither break nor extend a run of failures.
    const real = { test: { $ne: true } };
    const stored = await this.attempts.find({ webhook_id: webhookId, ok: true, at: { $gte: since }, ...real }, { projection: { at: 1 } }).sort({ at: -1 }).limit(1).toArray();
    const tallied = await this.tallies.find({ webhook_id: webhookId, ok: true }, { projection: { at: 1, skipped: 1, test: 1 } }).toArray();
    const counters = await this.db.collection<WebhookCountersRecord>('webhook_counters').findOne({ _id: webhookId }, { projection: { last_success_at: 1 } });
    const successes = [...stored.map((a) => a.at), ...tallied.filter((t) => !t.skipped && !t.test).map((t) => t.at), counters?.last_success_at];
    let lastSuccess: Date | null = null;
    for (const at of successes) if (at && at >= since && (!lastSuccess || at > lastSuccess)) lastSuccess = at;
    const after = lastSuccess ? { $gt: lastSuccess } : { $gte: since };
    return (await this.attempts.find({ webhook_id: webhookId, ok: false, at: after, ...real }, { projection: { _id: 1 } }).limit(n).toArray()).length;
  }
}

/** What a delivery keeps of its first attempt. */
function keptInside(a: AttemptRecord): FirstAttempt {
  return { at: a.at, ok: a.ok, status_code: a.status_code, latency_ms: a.latency_ms, error_class: a.error_class, response_body: a.response_body };
}

/** The record of a delivery's first attempt, kept inside it. */
function attemptInside(d: DeliveryRecord, a: FirstAttempt): AttemptRecord {
  return { _id: `${d._id}:1`, team_id: d.team_id, webhook_id: d.webhook_id, delivery_id: d._id, attempt: 1, ...a };
}

/**
 * Whether a stored delivery is counted in the log by its first attempt or its skip:
 * not one stored before the log's markers, which the log's backfill counts.
 */
export function countsInLog(d: DeliveryRecord): boolean {
  return d.log_minute !== undefined && d.log_minute !== null && d.log_backfilled !== true;
}
