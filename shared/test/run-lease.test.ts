// RunLease: one holder of a key at a time, renewed slot by slot, taken over only
// once it ran out (store/run-lease.ts).
import type { Db } from 'mongodb';
import { LOCKS_COLLECTION } from '../src/store/lock.ts';
import { RunLease } from '../src/store/run-lease.ts';
import { scratchDatabase } from '@lpm/test-kit/scratch-database';

const P = 10_000;
let db: Db;

scratchDatabase('run_lease', (opened) => (db = opened));

const slots = async (key: string) =>
  (
    await db
      .collection<{ _id: string; owner: string }>(LOCKS_COLLECTION)
      .find({ _id: { $regex: `^${key}:` } })
      .toArray()
  )
    .map((d) => d._id)
    .sort();

test('when a key is held, then another take gets nothing until it is released', async () => {
  const first = await RunLease.take(db, 'held', P);
  expect(first).not.toBeNull();
  expect(await RunLease.take(db, 'held', P)).toBeNull();
  await first!.release();
  const second = await RunLease.take(db, 'held', P);
  expect(second).not.toBeNull();
  await second!.release();
  expect(await slots('held')).toEqual([]);
});

test('when the holder renews as time passes, then it keeps the key, and no contender takes it meanwhile', async () => {
  const slot = Math.floor(Date.now() / P);
  const t = slot * P + 1;
  const holder = (await RunLease.take(db, 'renewed', P, t))!;
  expect(holder.until).toBe((slot + 2) * P);
  expect(await holder.renew(t + P)).toBe(true);
  expect(holder.until).toBe((slot + 3) * P);
  expect(await RunLease.take(db, 'renewed', P, t + P)).toBeNull();
  expect(await RunLease.take(db, 'renewed', P, t + 2 * P)).toBeNull();
  expect(await slots('renewed')).toEqual([slot, slot + 1, slot + 2].map((n) => `renewed:${n}`).sort());
  await holder.release();
});

test('when an ordered insert meets a slot someone holds, then the store inserts none of the slots after it (what renewal relies on)', async () => {
  const col = db.collection<{ _id: string }>(LOCKS_COLLECTION);
  await col.insertOne({ _id: 'ordered:1' });
  await expect(col.insertMany([{ _id: 'ordered:1' }, { _id: 'ordered:2' }], { ordered: true })).rejects.toThrow();
  expect(await slots('ordered')).toEqual(['ordered:1']);
});

test('when the holder let its lease run out, then another takes the key and the old holder learns it lost it', async () => {
  const t = Math.floor(Date.now() / P) * P + 1;
  const late = (await RunLease.take(db, 'expired', P, t))!;
  const next = await RunLease.take(db, 'expired', P, t + 2 * P);
  expect(next).not.toBeNull();
  expect(await late.renew(t + 2 * P)).toBe(false);
  await late.release();
  // The old holder's release leaves the new holder's slots.
  expect(await RunLease.take(db, 'expired', P, t + 2 * P)).toBeNull();
  await next!.release();
});

test('when the holder let its lease run out and nobody took the key, then its renewal takes it again', async () => {
  const slot = Math.floor(Date.now() / P);
  const slow = (await RunLease.take(db, 'retaken', P, slot * P + 1))!;
  expect(await slow.renew((slot + 3) * P + 1)).toBe(true);
  expect(slow.until).toBe((slot + 5) * P);
  expect(await RunLease.take(db, 'retaken', P, (slot + 3) * P + 1)).toBeNull();
  await slow.release();
  expect(await slots('retaken')).toEqual([]);
});
