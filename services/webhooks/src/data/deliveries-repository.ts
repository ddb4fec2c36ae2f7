// Deliveries: one event for one webhook, its body fixed once. A first attempt that
// succeeded in the fan-out is kept inside its delivery (`first_attempt`), so the
// common delivery is one document; every other attempt is recorded by
// AttemptsRepository (attempts-repository.ts), and a queued attempt is claimed
// before it is sent through AttemptClaimsRepository (attempt-claims-repository.ts).
// Deliveries are inserted in groups (InsertBatcher): the fan-out's many inserts at
// once cost the store a round trip a group.
import type { Db } from 'mongodb';
import { pageWindow, parseSort, type ListQuery, type RecordPage } from '@lpm/shared/http/pagination';
import { readBucketPage } from '@lpm/shared/store/bucket-pages';
import { InsertBatcher, type InsertOutcome } from '@lpm/shared/store/insert-batcher';
import { bucketOf, ownedBy, purgeByMarker, sweepBuckets } from '@lpm/shared/store/markers';
import { SWEEP } from '@lpm/shared/store/time-budgets';
import { DAY_MS } from '@lpm/shared/time';
import { WebhookData, webhookCollections } from './collections.ts';
import { AttemptClaimsRepository, dropClaimsOf } from './attempt-claims-repository.ts';
import { AttemptsRepository, dropAttemptsOf, dropTalliesOf } from './attempts-repository.ts';
import { DeliveryLogCounts, logMarkers, minuteMarker, type MinuteCounts } from './delivery-log-counts.ts';
import {
  DELIVERIES,
  type AttemptRecord,
  type DeliveryRecord,
  type DeliveryStatus,
  type FirstAttempt,
} from './webhook-entity.ts';

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

/** The size of the buckets of `due_minute`, the rescue's marker. */
const DUE_BUCKET_MS = 60_000;
/** The most overdue deliveries the rescue's range query visits in one run. */
const RANGE_LIMIT = 500;

/** The markers that go with a delivery's updated_at and next_attempt_at (@lpm/shared/store/markers). */
const updatedDay = (updatedAt: Date) => ({ updated_day: bucketOf(updatedAt, DAY_MS) });
const dueMinute = (nextAttemptAt: Date | null) => ({
  due_minute: nextAttemptAt && bucketOf(nextAttemptAt, DUE_BUCKET_MS),
});

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
  const { deliveries, counters, recoveries } = webhookCollections(db);
  const ids = (await deliveries.find({ webhook_id: webhookId }, { projection: { _id: 1 }, ...SWEEP }).toArray()).map(
    (d) => d._id,
  );
  await dropClaimsOf(db, ids);
  const attempts = await dropAttemptsOf(db, webhookId);
  const dropped = await deliveries.deleteMany({ webhook_id: webhookId }, SWEEP);
  await dropTalliesOf(db, webhookId);
  await counters.deleteOne({ _id: webhookId });
  await recoveries.deleteMany({ webhook_id: webhookId });
  await new DeliveryLogCounts(db).dropWebhook(webhookId);
  return { deliveries: dropped.deletedCount, attempts };
}

export interface DeliveriesRepositoryOptions {
  /**
   * How long a claim on an attempt is exclusive at least (at most twice this: the
   * time slots of AttemptClaimsRepository). A claim whose holder died is taken over after that.
   */
  attemptClaimMs: number;
}

export class DeliveriesRepository extends WebhookData {
  private readonly deliveryInserts: InsertBatcher<DeliveryRecord>;
  private readonly logCounts: DeliveryLogCounts;
  /** The attempts (and their tallies) of these deliveries. */
  readonly attempts: AttemptsRepository;
  /** The claims of their queued attempts. */
  readonly claims: AttemptClaimsRepository;

  constructor(db: Db, opts: DeliveriesRepositoryOptions) {
    super(db);
    this.logCounts = new DeliveryLogCounts(db);
    this.attempts = new AttemptsRepository(db);
    this.claims = new AttemptClaimsRepository(db, opts.attemptClaimMs);
    this.deliveryInserts = new InsertBatcher(this.collections.deliveries);
  }

  /** Stores the delivery, unless one is stored for its webhook and event already ('duplicate'). */
  insert(delivery: DeliveryRecord): Promise<InsertOutcome> {
    const marked = {
      ...delivery,
      ...updatedDay(delivery.updated_at),
      ...dueMinute(delivery.next_attempt_at),
      ...logMarkers(delivery.webhook_id, delivery.created_at),
    };
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
    await this.attempts.countAttempt(first, delivery.created_at);
    const outcome = await this.insert({ ...delivery, first_attempt: keptInside(first) });
    if (outcome === 'duplicate' && !(await this.get(delivery._id))?.first_attempt)
      await this.attempts.storeAttempt(first);
    return outcome;
  }

  get(id: string): Promise<DeliveryRecord | null> {
    return this.collections.deliveries.findOne({ _id: id });
  }

  findForWebhook(teamId: string, webhookId: string, id: string): Promise<DeliveryRecord | null> {
    return this.collections.deliveries.findOne({ _id: id, webhook_id: webhookId, team_id: teamId });
  }

  /**
   * One page of a webhook's deliveries (without their bodies), newest first by
   * default: whole minutes skipped by their counts (delivery-log-counts.ts), then the
   * minutes the page falls in read by their markers. The plain query while the
   * webhook's deliveries are not all counted (none folded yet, or some stored before
   * the markers).
   */
  /** A page of the log; `match` narrows it to the deliveries with those values (read by a find, not the minute counts). */
  async page(
    teamId: string,
    webhookId: string,
    q: ListQuery,
    match: LogMatch = {},
  ): Promise<RecordPage<DeliveryRecord>> {
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
      this.collections.deliveries
        .find<DeliveryRecord>(filter, { projection: { body: 0 } })
        .sort({ created_at: direction, _id: direction })
        .skip(window.skip)
        .limit(window.limit)
        .toArray(),
      this.collections.deliveries.countDocuments(filter),
    ]);
    return { records, total };
  }

  /** The page's records, minute after minute (bucket-pages.ts); a count behind its minute (a first attempt not folded yet) only moves the page's edge. */
  private byMinutes(
    teamId: string,
    webhookId: string,
    minutes: MinuteCounts,
    direction: 1 | -1,
    window: { skip: number; limit: number },
  ): Promise<DeliveryRecord[]> {
    const ordered = [...minutes].filter(([, n]) => n > 0).sort(([a], [b]) => (a - b) * direction);
    return readBucketPage(
      ordered,
      ([, n]) => n,
      window,
      ([minute], skip, limit) =>
        this.collections.deliveries
          .find<DeliveryRecord>(
            { log_minute: minuteMarker(webhookId, minute), ...ownedBy('team_id', teamId) },
            { projection: { body: 0 }, sort: { created_at: direction, _id: direction }, skip, limit },
          )
          .toArray(),
    );
  }

  /** Makes a delivery pending its next attempt now; `recoveryId`: the recovery re-queueing it. */
  async markPending(id: string, now: Date, recoveryId?: string): Promise<void> {
    const recovered = recoveryId ? { recovery_id: recoveryId } : {};
    await this.collections.deliveries.updateOne(
      { _id: id },
      {
        $set: {
          status: 'pending',
          next_attempt_at: now,
          updated_at: now,
          ...updatedDay(now),
          ...dueMinute(now),
          ...recovered,
        },
      },
    );
  }

  /** Keeps a delivery skipped at once (its webhook inactive), counted in the log by a tally of its skip. */
  async insertSkipped(d: DeliveryRecord): Promise<void> {
    if ((await this.insert(d)) !== 'inserted') return;
    await this.attempts.countSkip(d, d.created_at);
  }

  /** Skips a pending delivery; one never attempted is counted in the log by a tally of its skip (once, by its id). */
  async skip(d: DeliveryRecord): Promise<void> {
    const now = new Date();
    if (d.attempts_count === 0 && countsInLog(d)) {
      await this.attempts.countSkip(d, now);
    }
    await this.collections.deliveries.updateOne(
      { _id: d._id, status: 'pending' },
      { $set: { status: 'skipped', next_attempt_at: null, updated_at: now, ...updatedDay(now), ...dueMinute(null) } },
    );
  }

  async recordOutcome(id: string, o: Outcome): Promise<void> {
    await this.collections.deliveries.updateOne(
      { _id: id },
      {
        $set: {
          ...o,
          updated_at: o.last_attempt_at,
          ...updatedDay(o.last_attempt_at),
          ...dueMinute(o.next_attempt_at),
        },
      },
    );
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
      bucket: async (minute) =>
        each(
          await this.collections.deliveries
            .find<DeliveryRecord>({ due_minute: minute, status: 'pending' }, withoutBody)
            .toArray(),
        ),
      range: async () =>
        each(
          await this.collections.deliveries
            .find<DeliveryRecord>({ status: 'pending', next_attempt_at: { $lt: before } }, withoutBody)
            .limit(RANGE_LIMIT)
            .toArray(),
        ),
      rangeLimit: RANGE_LIMIT,
    });
  }

  /** Moves a stuck delivery's next attempt to `now`, unless an attempt was recorded meanwhile. */
  async requeued(d: DeliveryRecord, now: Date): Promise<void> {
    await this.collections.deliveries.updateOne(
      { _id: d._id, attempts_count: d.attempts_count },
      { $set: { next_attempt_at: now, ...dueMinute(now) } },
    );
  }

  /**
   * Retention: drops attempts made, and deliveries last changed, before `cutoff`, by
   * their day markers (purgeByMarker). Deletes only, so it is safe to run on several
   * replicas at once and needs no exactly-once claim. `ranged`: this run also deleted
   * by range, reaching records without the markers.
   */
  async purgeOlderThan(cutoff: Date): Promise<Purged & { ranged: boolean }> {
    const attempts = await this.attempts.purgeOlderThan(cutoff);
    const deliveries = await purgeByMarker(this.db, {
      collection: DELIVERIES,
      timeField: 'updated_at',
      markerField: 'updated_day',
      bucketMs: DAY_MS,
      before: cutoff,
    });
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
    const attempts = await this.attempts.purgeOrphans(existing, listedBefore);
    const deliveries = await this.collections.deliveries.deleteMany(
      { webhook_id: { $nin: existing }, created_at: { $lt: listedBefore } },
      SWEEP,
    );
    return { deliveries: deliveries.deletedCount, attempts };
  }
}

/** What a delivery keeps of its first attempt. */
function keptInside(a: AttemptRecord): FirstAttempt {
  return {
    at: a.at,
    ok: a.ok,
    status_code: a.status_code,
    latency_ms: a.latency_ms,
    error_class: a.error_class,
    response_body: a.response_body,
  };
}

/**
 * Whether a stored delivery is counted in the log by its first attempt or its skip:
 * not one stored before the log's markers, which the log's backfill counts.
 */
export function countsInLog(d: DeliveryRecord): boolean {
  return d.log_minute !== undefined && d.log_minute !== null && d.log_backfilled !== true;
}
