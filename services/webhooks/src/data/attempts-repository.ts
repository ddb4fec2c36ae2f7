// Attempts and their tallies. An attempt's id is `<delivery>:<n>`, so each attempt is
// recorded once however often its job runs. A first attempt that succeeded in the
// fan-out is kept inside its delivery (deliveries-repository.ts); every other attempt
// is a document of `attempts`. Each attempt is counted first by a tally, which the
// counter fold adds to the webhook's counters and deletes (counters-repository.ts).
// Attempts and tallies are inserted in groups (InsertBatcher).
import type { Db } from 'mongodb';
import { InsertBatcher } from '@lpm/shared/store/insert-batcher';
import { bucketOf, purgeByMarker } from '@lpm/shared/store/markers';
import { SWEEP } from '@lpm/shared/store/time-budgets';
import { DAY_MS } from '@lpm/shared/time';
import { WebhookData } from './collections.ts';
import {
  ATTEMPT_TALLIES,
  ATTEMPTS,
  type AttemptRecord,
  type AttemptTallyRecord,
  type DeliveryRecord,
  type FirstAttempt,
} from './webhook-entity.ts';

/** How long an attempt's record waits for others to go with it in one insert. */
const RECORD_LINGER_MS = 20;

/** Drops a deleted webhook's attempts (dropWebhookHistory): a delete by equality. */
export async function dropAttemptsOf(db: Db, webhookId: string): Promise<number> {
  return (await db.collection<AttemptRecord>(ATTEMPTS).deleteMany({ webhook_id: webhookId }, SWEEP)).deletedCount;
}

/** Drops a deleted webhook's tallies not folded yet (dropWebhookHistory): a delete by equality. */
export async function dropTalliesOf(db: Db, webhookId: string): Promise<void> {
  await db.collection<AttemptTallyRecord>(ATTEMPT_TALLIES).deleteMany({ webhook_id: webhookId }, SWEEP);
}

export class AttemptsRepository extends WebhookData {
  private readonly attemptInserts: InsertBatcher<AttemptRecord>;
  private readonly tallyInserts: InsertBatcher<AttemptTallyRecord>;

  constructor(db: Db) {
    super(db);
    // The first insert of a recorded attempt lingers a little for others; the later ones go with the callers it releases together.
    this.tallyInserts = new InsertBatcher(this.collections.tallies, { lingerMs: RECORD_LINGER_MS });
    this.attemptInserts = new InsertBatcher(this.collections.attempts);
  }

  /** The attempt recorded with this id (`<delivery>:<n>`), if any. */
  attemptById(id: string): Promise<AttemptRecord | null> {
    return this.collections.attempts.findOne({ _id: id });
  }

  /**
   * Counts an attempt: its tally, which the counter fold adds to the webhook's
   * counters (once, by the attempt's id). `logged`: the created_at of the attempt's
   * delivery when this attempt counts it in the delivery log (its first, not asked
   * for through the API: `countsInLog`).
   */
  async countAttempt(attempt: AttemptRecord, logged: Date | null): Promise<void> {
    await this.tallyInserts.insert({
      _id: attempt._id,
      webhook_id: attempt.webhook_id,
      ok: attempt.ok,
      at: attempt.at,
      ...(logged && { logged }),
      ...(attempt.test && { test: true }),
    });
  }

  /** Counts a delivery's skip in the log, at `at` (once, by the delivery's id). */
  async countSkip(d: DeliveryRecord, at: Date): Promise<void> {
    await this.tallyInserts.insert({
      _id: `${d._id}:skipped`,
      webhook_id: d.webhook_id,
      ok: true,
      at,
      logged: d.created_at,
      skipped: true,
    });
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

  /** Stores a counted attempt, or gives back the one recorded before. */
  async storeAttempt(attempt: AttemptRecord): Promise<AttemptRecord> {
    if ((await this.attemptInserts.insert({ ...attempt, day: bucketOf(attempt.at, DAY_MS) })) === 'inserted')
      return attempt;
    const stored = await this.attemptById(attempt._id);
    if (!stored) throw new Error(`attempt ${attempt._id} refused as a duplicate but not found`);
    return stored;
  }

  /** Retention: drops attempts made before `cutoff`, by their day markers (purgeByMarker). */
  async purgeOlderThan(cutoff: Date): Promise<{ deleted: number; ranged: boolean }> {
    return purgeByMarker(this.db, {
      collection: ATTEMPTS,
      timeField: 'at',
      markerField: 'day',
      bucketMs: DAY_MS,
      before: cutoff,
    });
  }

  /** Drops attempts of webhooks not in `existing`, made before `listedBefore` (DeliveriesRepository.purgeOrphans). */
  async purgeOrphans(existing: string[], listedBefore: Date): Promise<number> {
    return (
      await this.collections.attempts.deleteMany({ webhook_id: { $nin: existing }, at: { $lt: listedBefore } }, SWEEP)
    ).deletedCount;
  }

  /**
   * The attempts of these deliveries of a webhook, by attempt number: those kept
   * inside them, and from `attempts` (the webhook by equality: the local store reads
   * only its attempts) those of the deliveries that may have more.
   */
  async attemptsOf(webhookId: string, deliveries: DeliveryRecord[]): Promise<AttemptRecord[]> {
    const inside = deliveries.flatMap((d) => (d.first_attempt ? [attemptInside(d, d.first_attempt)] : []));
    const more = deliveries
      .filter((d) => !d.first_attempt || d.attempts_count > 1 || d.status === 'pending')
      .map((d) => d._id);
    const stored =
      more.length === 0
        ? []
        : await this.collections.attempts.find({ webhook_id: webhookId, delivery_id: { $in: more } }).toArray();
    return [...inside, ...stored].sort((a, b) => a.attempt - b.attempt);
  }
}

/** The record of a delivery's first attempt, kept inside it. */
function attemptInside(d: DeliveryRecord, a: FirstAttempt): AttemptRecord {
  return { _id: `${d._id}:1`, team_id: d.team_id, webhook_id: d.webhook_id, delivery_id: d._id, attempt: 1, ...a };
}
