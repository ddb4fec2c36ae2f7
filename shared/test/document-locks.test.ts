import type { Db } from 'mongodb';
import {
  DOCUMENT_LOCK_MS,
  LOCKS_COLLECTION,
  lockKey,
  tryDocumentLock,
  tryDocumentLocks,
  withDocumentLock,
} from '../src/store/lock.ts';
import { scratchDatabase } from '@lpm/test-kit/scratch-database';

let db: Db;

scratchDatabase('document_locks', (opened) => (db = opened));

const locks = () => db.collection<{ _id: string; owner: string }>(LOCKS_COLLECTION);

describe('tryDocumentLocks', () => {
  it('when some documents are locked by others, then the batch takes the rest in one insert, and each lock it took excludes a single-document lock until released', async () => {
    const busy = await tryDocumentLock(db, 'things', 'b');
    expect(busy).not.toBeNull();
    // Another holder of only the next time slot of `c` (taken in the slot before, say).
    const slot = Math.floor(Date.now() / DOCUMENT_LOCK_MS);
    await locks().insertOne({
      _id: `${lockKey('things', 'c')}:${slot + 1}`,
      owner: 'someone-else',
      expires_at: new Date((slot + 2) * DOCUMENT_LOCK_MS),
      expires_hour: 0,
    } as never);
    try {
      const batch = await tryDocumentLocks(db, 'things', ['a', 'b', 'c', 'd']);
      // `c` is refused when its second slot is the other's, or (a slot boundary passed meanwhile) its first.
      expect(batch.held).toEqual(['a', 'd']);
      expect(await tryDocumentLock(db, 'things', 'a')).toBeNull();
      expect(await tryDocumentLock(db, 'things', 'd')).toBeNull();

      await batch.release();
      const left = (await locks().find({}).toArray()).map((l) => l.owner);
      expect(left.filter((o) => o === 'someone-else')).toHaveLength(1);
      expect(left).toHaveLength(3); // `b`'s two slots and the other's one
      const a = await tryDocumentLock(db, 'things', 'a');
      expect(a).not.toBeNull();
      await a!.release();
    } finally {
      await busy!.release();
      await locks().deleteMany({ owner: 'someone-else' });
    }
  });

  it('when no document is named, then nothing is written and release does nothing', async () => {
    const batch = await tryDocumentLocks(db, 'things', []);
    expect(batch.held).toEqual([]);
    await batch.release();
    expect(await locks().countDocuments({})).toBe(0);
  });
});

describe('withDocumentLock', () => {
  it('when callers of one process wait for a document another holds, then they hold it one at a time, in the order they asked, and none is refused', async () => {
    const other = await tryDocumentLock(db, 'things', 'queued');
    expect(other).not.toBeNull();
    const entered: number[] = [];
    let inside = 0;
    let most = 0;
    const callers = Array.from({ length: 12 }, (_, i) =>
      withDocumentLock(
        db,
        'things',
        'queued',
        async () => {
          entered.push(i);
          most = Math.max(most, ++inside);
          await new Promise((r) => setTimeout(r, 20));
          inside--;
        },
        { waitMs: 60_000 },
      ),
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(entered).toEqual([]);
    await other!.release();
    await Promise.all(callers);
    expect(entered).toEqual(Array.from({ length: 12 }, (_, i) => i));
    expect(most).toBe(1);
    expect(await locks().countDocuments({})).toBe(0);
  });

  it('when a waiter gives up, then it is refused with 503 and the one behind it still waits for the one before it', async () => {
    const other = await tryDocumentLock(db, 'things', 'impatient');
    const entered: string[] = [];
    const enter = (name: string, waitMs: number) =>
      withDocumentLock(db, 'things', 'impatient', async () => void entered.push(name), { waitMs });
    const first = enter('first', 60_000);
    const impatient = enter('impatient', 200).then(
      () => null,
      (e: unknown) => e,
    );
    const last = enter('last', 60_000);
    const refused = await impatient;
    expect(refused).toMatchObject({ status: 503, message: 'The record is busy; retry' });
    await new Promise((r) => setTimeout(r, 100));
    expect(entered).toEqual([]);
    await other!.release();
    await Promise.all([first, last]);
    expect(entered).toEqual(['first', 'last']);
  });
});
