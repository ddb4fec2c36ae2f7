// Another writer holding records' store locks (shared/src/store/lock.ts), for the
// tests of a write that finds its record busy.
import type { Db } from 'mongodb';
import { DOCUMENT_LOCK_MS, LOCKS_COLLECTION, lockKey } from '@lpm/shared/store/lock';

const HOLDER = 'test';

/** Takes the next four lock slots of record `id` of `collection`: well past a write's lock wait. */
export async function holdRecordLock(db: Db, collection: string, id: string): Promise<void> {
  const slot = Math.floor(Date.now() / DOCUMENT_LOCK_MS);
  const held = Array.from({ length: 4 }, (_, i) => ({
    _id: `${lockKey(collection, id)}:${slot + i}`,
    owner: HOLDER,
    expires_at: new Date((slot + i + 1) * DOCUMENT_LOCK_MS),
  }));
  await db.collection<{ _id: string; owner: string; expires_at: Date }>(LOCKS_COLLECTION).insertMany(held);
}

/** Lets go of every lock holdRecordLock took. */
export async function releaseRecordLocks(db: Db): Promise<void> {
  await db.collection(LOCKS_COLLECTION).deleteMany({ owner: HOLDER });
}
