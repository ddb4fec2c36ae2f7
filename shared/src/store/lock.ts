// A short exclusive lock on one document. FerretDB 1.24 runs every update and
// findAndModify as "read, apply in Go, UPDATE ... WHERE _id = ?" with no isolation,
// so two concurrent read-modify-writes of one document can silently lose one of
// them, whatever the filter says (a version field included), and a lease taken
// with findOneAndUpdate is not exclusive. A unique-_id insert is atomic there, so
// locks are inserts into one collection. Everything that changes a record holds
// its lock: writers for their read-modify-write, the outbox relay for its drain,
// the time signals for their emit. On MongoDB the same code runs.
import { randomUUID } from 'node:crypto';
import type { Collection, Db, Document } from 'mongodb';
import { serviceUnavailable } from '../errors.ts';
import { isDuplicateKey } from './duplicate-key.ts';
import { HOUR_MS, bucketOf, purgeByMarker } from './markers.ts';

export const LOCKS_COLLECTION = 'document_locks';

/**
 * A lock is exclusive for at least this long; its holder must be done within it,
 * and one that dies blocks the document for at most twice as long. Every holder
 * uses this one period (locks are time-slot keys). Replica clocks must agree to
 * well within it.
 */
export const DOCUMENT_LOCK_MS = 5000;

interface LockDoc {
  _id: string;
  owner: string;
  expires_at: Date;
  /** The hour of expires_at: the sweep's equality marker (markers.ts). */
  expires_hour: number;
}

export interface HeldLock {
  /** Date.now() when it was taken: the holder is safe until acquiredAt + DOCUMENT_LOCK_MS. */
  acquiredAt: number;
  release(): Promise<void>;
}

export interface DocumentLockOptions {
  /** Give up (503 "The record is busy") after waiting this long. Default 5000. */
  waitMs?: number;
}

const locksOf = (db: Db) => db.collection<LockDoc>(LOCKS_COLLECTION);
export const lockKey = (collection: string, id: unknown) => `lock:${collection}:${String(id)}`;

/** A time slot's document: its markers beside these. */
export interface SlotDoc extends Document {
  _id: string;
  owner?: string | null;
  expires_at: Date;
}

export interface TimeSlots {
  /** The first of the two slots taken (slot n covers [n, n + 1) periods). */
  slot: number;
  release(): Promise<void>;
}

/**
 * Exclusive time slots, the one atomic claim FerretDB offers (a unique insert): an
 * insert of `<key>:<slot>` and `<key>:<slot+1>` (slot = now / periodMs) succeeds for
 * one owner only, and holding both covers at least periodMs from now. Expired slots
 * are never reused, so no update is needed. Each slot document carries `owner`,
 * `expires_at` and `markers(slot)`. Resolves null at once when another owner holds
 * either slot (taking nothing).
 */
export async function takeTimeSlots(
  col: Collection<SlotDoc>,
  key: string,
  periodMs: number,
  owner: string,
  markers: (slot: number) => Document,
  now = Date.now(),
): Promise<TimeSlots | null> {
  const slot = Math.floor(now / periodMs);
  const ids = [`${key}:${slot}`, `${key}:${slot + 1}`];
  // One delete for both, by owner: a slot another owner holds is never taken away.
  // FerretDB filters the owner in SQL (the collection holds only slots held now, and
  // expired ones until a sweep) and applies the `$in`, which it cannot push down, in Go.
  const release = async () => {
    await col.deleteMany({ owner, _id: { $in: ids } });
  };
  try {
    // Ordered: a refused first slot stops the second. One round trip.
    await col.insertMany(
      [slot, slot + 1].map((s, i) => ({ _id: ids[i], owner, expires_at: new Date((s + 1) * periodMs), ...markers(s) })),
      { ordered: true },
    );
  } catch (err) {
    await release().catch(() => {});
    if (isDuplicateKey(err)) return null;
    throw err;
  }
  return { slot, release };
}

/** Takes the document's lock (time slots of DOCUMENT_LOCK_MS); resolves null at once when someone else holds it. */
export async function tryDocumentLock(db: Db, collection: string, id: unknown, owner: string = randomUUID()): Promise<HeldLock | null> {
  const key = lockKey(collection, id);
  const acquiredAt = Date.now();
  const expiresHour = (s: number) => ({ expires_hour: bucketOf((s + 1) * DOCUMENT_LOCK_MS, HOUR_MS) });
  try {
    const taken = await takeTimeSlots(db.collection<SlotDoc>(LOCKS_COLLECTION), key, DOCUMENT_LOCK_MS, owner, expiresHour, acquiredAt);
    return taken && { acquiredAt, release: taken.release };
  } catch (err) {
    throw new Error(`lock ${key} failed`, { cause: err });
  }
}

/** Runs fn while holding the document's lock, waiting up to `waitMs` for it. */
export async function withDocumentLock<T>(db: Db, collection: string, id: unknown, fn: () => Promise<T>, opts: DocumentLockOptions = {}): Promise<T> {
  const waitMs = opts.waitMs ?? 5000;
  const owner = randomUUID();
  const deadline = Date.now() + waitMs;
  let lock = await tryDocumentLock(db, collection, id, owner);
  for (let n = 0; !lock; n++) {
    if (Date.now() > deadline) {
      const key = lockKey(collection, id);
      throw serviceUnavailable('The record is busy; retry', { cause: new Error(`document lock ${key} not acquired within ${waitMs} ms`) });
    }
    await new Promise((r) => setTimeout(r, Math.min(50, 2 + n * 2) * (0.5 + Math.random())));
    lock = await tryDocumentLock(db, collection, id, owner);
  }
  try {
    return await fn();
  } finally {
    await lock.release().catch(() => {}); // expires by itself otherwise
  }
}

/** Drops locks left by holders that died (their slots have expired), hour by hour by their expires_hour. */
export async function sweepExpiredLocks(db: Db, now = Date.now()): Promise<number> {
  const { deleted } = await purgeByMarker(db, {
    collection: LOCKS_COLLECTION,
    timeField: 'expires_at',
    markerField: 'expires_hour',
    bucketMs: HOUR_MS,
    before: new Date(now - DOCUMENT_LOCK_MS),
  });
  return deleted;
}

export async function createLockIndexes(db: Db): Promise<void> {
  await locksOf(db).createIndex({ expires_hour: 1 });
}
