// A short exclusive lock on one document. FerretDB 1.24 runs every update and
// findAndModify as "read, apply in Go, UPDATE ... WHERE _id = ?" with no isolation,
// so two concurrent read-modify-writes of one document can silently lose one of
// them, whatever the filter says (a version field included), and a lease taken
// with findOneAndUpdate is not exclusive. A unique-_id insert is atomic there, so
// locks are inserts into one collection. Everything that changes a record holds
// its lock: writers for their read-modify-write, the outbox relay for its drain,
// the time signals for their emit. On MongoDB the same code runs.
import { randomUUID } from 'node:crypto';
import { MongoBulkWriteError, type Collection, type Db, type Document } from 'mongodb';
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
  release: () => Promise<void>;
}

/**
 * A held lock's lease, handed to the holder: check() right before each write. A
 * holder whose store stalled past DOCUMENT_LOCK_MS may have lost the lock to
 * another, so it writes nothing (503, as when the lock is busy).
 */
export interface Lease {
  /** Date.now() up to which the lock is surely held. */
  readonly until: number;
  check(): void;
}

export interface DocumentLockOptions {
  /** Give up (503 "The record is busy") after waiting this long. Default 5000. */
  waitMs?: number;
}

/** A lock slot's sweep marker: the hour it expires in. */
const expiresHour = (slot: number) => ({ expires_hour: bucketOf((slot + 1) * DOCUMENT_LOCK_MS, HOUR_MS) });
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
  release: () => Promise<void>;
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
  const taken = await takeManyTimeSlots(col, [key], periodMs, owner, markers, now);
  if (taken.taken[0]) return { slot: taken.slot, release: taken.release };
  await taken.release().catch(() => {});
  return null;
}

/** Time slots of many keys at once (takeTimeSlots): `taken[i]` says whether keys[i]'s two were both taken. */
export interface ManyTimeSlots {
  slot: number;
  taken: boolean[];
  /** Gives back every slot taken, those of keys only half taken included. */
  release: () => Promise<void>;
}

/**
 * takeTimeSlots for many keys in one unordered insert: a key is taken when both its
 * slots went in. A half-taken key's slot is kept until release, like the rest.
 */
export async function takeManyTimeSlots(
  col: Collection<SlotDoc>,
  keys: string[],
  periodMs: number,
  owner: string,
  markers: (slot: number) => Document,
  now = Date.now(),
): Promise<ManyTimeSlots> {
  const slot = Math.floor(now / periodMs);
  const docs = keys.flatMap((key) => slotDocs(key, slot, periodMs, owner, markers));
  const release = releaseOf(col, owner, docs);
  const taken = keys.map(() => true);
  if (keys.length === 0) return { slot, taken, release };
  try {
    await col.insertMany(docs, { ordered: false });
  } catch (err) {
    const refused = refusedAsTaken(err);
    if (!refused) {
      await release().catch(() => {});
      throw err;
    }
    for (const index of refused) taken[Math.floor(index / 2)] = false;
  }
  return { slot, taken, release };
}

function slotDocs(
  key: string,
  slot: number,
  periodMs: number,
  owner: string,
  markers: (slot: number) => Document,
): SlotDoc[] {
  return [slot, slot + 1].map((s) => ({
    _id: `${key}:${s}`,
    owner,
    expires_at: new Date((s + 1) * periodMs),
    ...markers(s),
  }));
}

/**
 * One delete for all, by owner: a slot another owner holds is never taken away.
 * FerretDB filters the owner in SQL (the collection holds only slots held now, and
 * expired ones until a sweep) and applies the `$in`, which it cannot push down, in Go.
 */
function releaseOf(col: Collection<SlotDoc>, owner: string, docs: SlotDoc[]): () => Promise<void> {
  const ids = docs.map((d) => d._id);
  return async () => {
    await col.deleteMany({ owner, _id: { $in: ids } });
  };
}

/** The indexes of an unordered insert's documents refused because their slot is held, or null when anything else failed. */
function refusedAsTaken(err: unknown): number[] | null {
  if (!(err instanceof MongoBulkWriteError)) return null;
  const errors = [err.writeErrors].flat();
  if (errors.length === 0 || !errors.every((e) => isDuplicateKey(e))) return null;
  return errors.map((e) => e.index);
}

/** The locks of several documents of one collection, taken together. */
export interface HeldLocks<Id> {
  /** Date.now() when they were taken: the holder is safe until acquiredAt + DOCUMENT_LOCK_MS. */
  acquiredAt: number;
  /** The ids whose locks were taken (the others are held by someone else). */
  held: Id[];
  release: () => Promise<void>;
}

/** Takes the locks of the documents that nobody else holds, in one insert; release gives them all back in one delete. */
export async function tryDocumentLocks<Id>(
  db: Db,
  collection: string,
  ids: Id[],
  owner: string = randomUUID(),
): Promise<HeldLocks<Id>> {
  const keys = ids.map((id) => lockKey(collection, id));
  const acquiredAt = Date.now();
  try {
    const slots = await takeManyTimeSlots(
      db.collection<SlotDoc>(LOCKS_COLLECTION),
      keys,
      DOCUMENT_LOCK_MS,
      owner,
      expiresHour,
      acquiredAt,
    );
    return { acquiredAt, held: ids.filter((_, i) => slots.taken[i]), release: slots.release };
  } catch (err) {
    throw new Error(`lock ${keys.length === 1 ? keys[0] : `of ${keys.length} documents of ${collection}`} failed`, {
      cause: err,
    });
  }
}

/** Takes the document's lock (time slots of DOCUMENT_LOCK_MS); resolves null at once when someone else holds it. */
export async function tryDocumentLock(
  db: Db,
  collection: string,
  id: unknown,
  owner: string = randomUUID(),
): Promise<HeldLock | null> {
  const locks = await tryDocumentLocks(db, collection, [id], owner);
  if (locks.held.length === 1) return { acquiredAt: locks.acquiredAt, release: locks.release };
  await locks.release().catch(() => {});
  return null;
}

/**
 * Per lock (database and key), the turn of this process's last waiter: resolved
 * once that waiter is done. Waiters here line up behind each other and only the
 * first asks the store, so they are served in arrival order; another process's
 * holder is still waited for by polling, since the store cannot queue.
 */
const turns = new Map<string, Promise<void>>();

/** Resolves when this process's waiters for `key` before this call are done, or false at `deadline`; call done() either way. */
function lineUp(key: string, deadline: number): { ready: Promise<boolean>; done(): void } {
  const before = turns.get(key) ?? Promise.resolve();
  let done!: () => void;
  const mine = new Promise<void>((resolve) => {
    done = resolve;
  });
  // Giving up early must not let the next waiter past the ones still before it.
  const turn = Promise.all([before, mine]).then(() => {
    if (turns.get(key) === turn) turns.delete(key);
  });
  turns.set(key, turn);
  let timer: NodeJS.Timeout | undefined;
  const ready = Promise.race([
    before.then(() => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
    }),
  ]).finally(() => clearTimeout(timer));
  return { ready, done };
}

function busy(key: string, waitMs: number): Error {
  return serviceUnavailable('The record is busy; retry', {
    cause: new Error(`document lock ${key} not acquired within ${waitMs} ms`),
  });
}

/** The lease of a lock of `key` taken at `acquiredAt` (ms). */
export function leaseOf(key: string, acquiredAt: number): Lease {
  const until = acquiredAt + DOCUMENT_LOCK_MS;
  return {
    until,
    check() {
      const late = Date.now() - until;
      if (late >= 0)
        throw serviceUnavailable('The record is busy; retry', {
          cause: new Error(`document lock ${key}: lease ran out ${late} ms before the write`),
        });
    },
  };
}

/** Runs fn while holding the document's lock, waiting up to `waitMs` for it; fn checks the lease before it writes. */
export async function withDocumentLock<T>(
  db: Db,
  collection: string,
  id: unknown,
  fn: (lease: Lease) => Promise<T>,
  opts: DocumentLockOptions = {},
): Promise<T> {
  const waitMs = opts.waitMs ?? 5000;
  const key = lockKey(collection, id);
  const deadline = Date.now() + waitMs;
  const line = lineUp(`${db.databaseName}\u0000${key}`, deadline);
  try {
    if (!(await line.ready)) throw busy(key, waitMs);
    const owner = randomUUID();
    let lock = await tryDocumentLock(db, collection, id, owner);
    for (let n = 0; !lock; n++) {
      if (Date.now() > deadline) throw busy(key, waitMs);
      await new Promise((r) => setTimeout(r, Math.min(50, 2 + n * 2) * (0.5 + Math.random())));
      lock = await tryDocumentLock(db, collection, id, owner);
    }
    try {
      return await fn(leaseOf(key, lock.acquiredAt));
    } finally {
      await lock.release().catch(() => {}); // expires by itself otherwise
    }
  } finally {
    line.done();
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
