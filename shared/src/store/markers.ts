// Equality markers for periodic queries. FerretDB 1.24 pushes only a top-level
// `field: scalar` equality down to SQL (docs/ferretdb.md); a range such as
// `{expires_at: {$lt: t}}` reads and decodes every document of the collection in
// Go. So a record a periodic query looks for also carries the number of the bucket
// (hour, day) its instant falls in, and the query asks bucket by bucket by equality
// (an index lookup on the local store's GIN indexes), the range then applied only
// to that bucket's few records. A cursor document per query says from which bucket
// on there may still be work, so a process that was down catches up bucket by
// bucket. Records written before their marker existed are reached once by the plain
// range query, when there is no cursor yet. The same code runs on MongoDB.
import type { Db, Document, Filter } from 'mongodb';
import { isDuplicateKey } from './duplicate-key.ts';
import { SWEEP } from './time-budgets.ts';

export const HOUR_MS = 3_600_000;

/**
 * The owner a marker names (`<team>:<day>`, `<webhook>:<minute>`), checked again on
 * the records the marker selects: defence in depth, should an id ever hold the
 * marker's `:`. A `$in` so FerretDB matches it in Go on those few records: as a
 * second pushed equality, PostgreSQL (no statistics on the local store) ANDs in the
 * owner's whole GIN posting list, which took a day's read of a team of 90,000
 * records from 1-6 ms to 15-40 ms. MongoDB reads by the marker's index either way.
 */
export const ownedBy = (field: string, owner: string): Record<string, { $in: string[] }> => ({
  [field]: { $in: [owner] },
});

/** The bucket `at` falls in, counting buckets of `bucketMs` from the epoch. */
export const bucketOf = (at: Date | number, bucketMs: number): number => Math.floor(+at / bucketMs);

/** A time signal's due field `f` has its slot in `f_slot` (shared/src/jobs/time-signals.ts). */
export const SIGNAL_SLOT_MS = HOUR_MS;
export const slotField = (dueField: string): string => `${dueField}_slot`;

/**
 * The slot markers to write with time signals' due fields: the hour of the due
 * instant, or of `now` when it is already past (so a sweep of the current slot finds
 * it), null for a disarmed field.
 */
export function signalSlots(fields: Record<string, Date | null>, now = new Date()): Record<string, number | null> {
  const slots: Record<string, number | null> = {};
  for (const [field, due] of Object.entries(fields)) {
    slots[slotField(field)] = due ? bucketOf(Math.max(due.getTime(), now.getTime()), SIGNAL_SLOT_MS) : null;
  }
  return slots;
}

/**
 * A cursor this many buckets behind is dropped for one range pass over the
 * collection: past that, a query per bucket costs more than reading every document.
 */
export const MAX_BUCKETS_BEHIND = 500;

const CURSORS = 'sweep_cursors';

interface Cursor {
  _id: string;
  /** Every bucket before this one is done. */
  next: number;
}

/** The first bucket of `key`'s query that may still hold work; null before its first complete pass. */
export async function readCursor(db: Db, key: string): Promise<number | null> {
  return (await db.collection<Cursor>(CURSORS).findOne({ _id: key }))?.next ?? null;
}

/**
 * Moves the cursor forward to `next`, never back. Replicas may write it at once:
 * each only claims buckets it saw done, and a write FerretDB loses leaves the cursor
 * lower, which costs a re-read and nothing else.
 */
export async function advanceCursor(db: Db, key: string, next: number): Promise<void> {
  const cursors = db.collection<Cursor>(CURSORS);
  try {
    await cursors.updateOne({ _id: key }, { $max: { next } }, { upsert: true });
  } catch (e) {
    if (!isDuplicateKey(e)) throw e;
    await cursors.updateOne({ _id: key }, { $max: { next } }); // another replica created it just now
  }
}

export interface MarkedPurge {
  collection: string;
  /** The instant records are purged by, and the field holding its bucket. */
  timeField: string;
  markerField: string;
  bucketMs: number;
  /** Records whose instant is before this go. */
  before: Date;
  /** Only records also matching this go; the others keep their bucket open for the next run. */
  only?: Filter<Document>;
}

/**
 * Deletes the records whose instant is before `before`: each whole bucket before the
 * boundary one by equality on its marker, the boundary bucket by marker and range.
 * The cursor passes a bucket once nothing is left in it. With no cursor (the first
 * run, which also declares the marker's index) one range delete over the collection
 * reaches the records written before their markers; `ranged` says it ran. A delete
 * only: replicas running it at once agree.
 */
export async function purgeByMarker(db: Db, p: MarkedPurge): Promise<{ deleted: number; ranged: boolean }> {
  const col = db.collection(p.collection);
  const key = `purge:${p.collection}:${p.markerField}`;
  const boundary = bucketOf(p.before, p.bucketMs);
  const expired = { [p.timeField]: { $lt: p.before } };
  const cursor = await readCursor(db, key);
  if (cursor === null || cursor < boundary - MAX_BUCKETS_BEHIND) {
    await col.createIndex({ [p.markerField]: 1 }, SWEEP);
    const { deletedCount } = await col.deleteMany({ ...expired, ...p.only }, SWEEP);
    const kept = p.only ? await col.findOne(expired, { projection: { _id: 1 }, ...SWEEP }) : null;
    if (!kept) await advanceCursor(db, key, boundary);
    return { deleted: deletedCount, ranged: true };
  }
  let deleted = 0;
  let firstKept: number | null = null;
  for (let b = cursor; b < boundary; b++) {
    deleted += (await col.deleteMany({ [p.markerField]: b, ...p.only })).deletedCount;
    if (firstKept === null && (await col.findOne({ [p.markerField]: b }, { projection: { _id: 1 } }))) firstKept = b;
  }
  deleted += (await col.deleteMany({ [p.markerField]: boundary, ...expired, ...p.only })).deletedCount;
  const next = firstKept ?? boundary;
  if (next > cursor) await advanceCursor(db, key, next);
  return { deleted, ranged: false };
}

export interface BucketVisits {
  /** Visits the records of one whole bucket, by equality on the marker. */
  bucket(bucket: number): Promise<number>;
  /** Visits the records due before bucket `upto` by range, marked or not. */
  range(): Promise<number>;
  /** The most records `range` visits in one run: when it visits this many, the next run ranges again. */
  rangeLimit?: number;
}

/**
 * Visits each bucket from `key`'s cursor up to (not including) `upto` by equality,
 * then moves the cursor to `upto`; what is due in `upto` and later is the caller's.
 * With no cursor yet, or one more than MAX_BUCKETS_BEHIND behind, the range query
 * runs instead, once (until it visits fewer than `rangeLimit`). Every visit must be
 * safe to repeat: a process may die before the cursor moves, replicas run at once.
 */
export async function sweepBuckets(db: Db, key: string, upto: number, visits: BucketVisits): Promise<number> {
  const cursor = await readCursor(db, key);
  if (cursor === null || cursor < upto - MAX_BUCKETS_BEHIND) {
    const visited = await visits.range();
    if (visits.rangeLimit === undefined || visited < visits.rangeLimit) await advanceCursor(db, key, upto);
    return visited;
  }
  let visited = 0;
  for (let b = cursor; b < upto; b++) visited += await visits.bucket(b);
  if (upto > cursor) await advanceCursor(db, key, upto);
  return visited;
}
