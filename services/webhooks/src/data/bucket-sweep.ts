// Periodic queries by an equality marker. FerretDB pushes only a top-level
// `field: scalar` down to SQL and runs a range over every row in Go, so records
// carry the number of the time bucket their instant falls in (`Math.floor(ms /
// bucketMs)`, see bucketOf) and a sweep visits each bucket once it is wholly due,
// by equality, from a cursor kept in the store. Records written before the
// marker existed (or by a replica still running older code) are reached by the
// range query, which the sweep keeps running until one has been made with a cutoff
// past the instant the cursor was created plus `unmarkedMs`: no unmarked record
// can be left after that. Every visit must be safe to repeat (a replica that dies
// before moving the cursor, two replicas at once).
import type { Db } from 'mongodb';
import { insertOrGet } from '@lpm/shared/store/duplicate-key';
import type { SweepCursorRecord } from './webhook-entity.ts';

/** More whole buckets than this behind (a long stop): one range query instead of a query per bucket. */
export const MAX_BUCKETS_PER_SWEEP = 1000;

export const bucketOf = (at: Date, bucketMs: number): number => Math.floor(at.getTime() / bucketMs);

export interface BucketSweep {
  /** The cursor's `_id`; a new one (e.g. for another bucket size) starts with a range query. */
  name: string;
  /** How far past the cursor's creation the instant a record without the marker is compared by may reach. */
  unmarkedMs: number;
  /** Visits the records of one whole bucket: the marker equal to `bucket`. */
  bucket(bucket: number): Promise<number>;
  /** Visits the records before `cutoff` by range, marked or not. */
  range(cutoff: Date): Promise<number>;
}

export interface SweepResult {
  visited: number;
  /** Whether the range query ran (the first sweep, records without the marker may remain, or a long stop). */
  ranged: boolean;
}

/**
 * Visits every bucket before `upto` not yet visited (each holds only records due,
 * whatever their instant within it), and runs the range query with `cutoff` while
 * records without the marker may remain. What is due in `upto` and later is the caller's.
 */
export async function runSweep(db: Db, sweep: BucketSweep, upto: number, cutoff: Date, now = new Date()): Promise<SweepResult> {
  const cursors = db.collection<SweepCursorRecord>('sweep_cursors');
  const fresh: SweepCursorRecord = { _id: sweep.name, next: upto, unmarked_until: new Date(now.getTime() + sweep.unmarkedMs), ranged_to: null };
  const cursor = await insertOrGet(cursors, fresh, { _id: sweep.name });
  const behind = upto - cursor.next > MAX_BUCKETS_PER_SWEEP;
  let visited = 0;
  if (!behind) for (let b = cursor.next; b < upto; b++) visited += await sweep.bucket(b);
  const ranged = behind || cursor.ranged_to === null || cursor.ranged_to < cursor.unmarked_until;
  if (ranged) visited += await sweep.range(cutoff);
  await cursors.updateOne({ _id: sweep.name }, { $max: { next: upto }, ...(ranged ? { $set: { ranged_to: cutoff } } : {}) });
  return { visited, ranged };
}
