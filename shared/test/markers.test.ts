import type { Db } from 'mongodb';
import {
  MAX_BUCKETS_BEHIND,
  advanceCursor,
  bucketOf,
  ownedBy,
  purgeByMarker,
  readCursor,
  sweepBuckets,
} from '../src/store/markers.ts';
import { mongoDedupe, purgeDedupeRecords } from '../src/messaging/dedupe.ts';
import { DOCUMENT_LOCK_MS, LOCKS_COLLECTION, sweepExpiredLocks, tryDocumentLock } from '../src/store/lock.ts';
import { DAY_MS } from '../src/time.ts';
import { scratchDatabase } from '@lpm/test-kit/scratch-database';

const HOUR = 3_600_000;
let db: Db;

scratchDatabase('markers', (opened) => (db = opened));

interface Rec {
  _id: string;
  at: Date;
  at_day?: number;
  pending?: boolean;
}

const ids = async (collection: string) =>
  (await db.collection<Rec>(collection).find().toArray()).map((r) => r._id).sort();
/** A record at `at` with its day marker, or without one (written before markers). */
const rec = (_id: string, at: number, marked = true): Rec => ({
  _id,
  at: new Date(at),
  ...(marked ? { at_day: bucketOf(at, DAY_MS) } : {}),
});

describe('purgeByMarker', () => {
  // Noon: the boundary day holds records on both sides of the cut.
  const cut = Date.parse('2026-06-10T12:00:00Z');
  const purge = (collection: string, before: number, only?: object) =>
    purgeByMarker(db, {
      collection,
      timeField: 'at',
      markerField: 'at_day',
      bucketMs: DAY_MS,
      before: new Date(before),
      only,
    });

  it('when there is no cursor yet, then one range delete also takes the records without a marker, and the cursor is stored at the boundary day', async () => {
    const col = 'first_run';
    await db
      .collection<Rec>(col)
      .insertMany([
        rec('legacy_old', cut - 3 * DAY_MS, false),
        rec('legacy_new', cut + HOUR, false),
        rec('old', cut - 1),
        rec('new', cut),
      ]);

    expect(await purge(col, cut)).toEqual({ deleted: 2, ranged: true });
    expect(await ids(col)).toEqual(['legacy_new', 'new']);
    expect(await readCursor(db, `purge:${col}:at_day`)).toBe(bucketOf(cut, DAY_MS));
  });

  it('when the cursor is there, then whole past days go by marker (no range over the collection) and the boundary day only before the cut, also after days without a run', async () => {
    const col = 'by_marker';
    await purge(col, cut); // stores the cursor
    const later = cut + 4 * DAY_MS;
    await db
      .collection<Rec>(col)
      .insertMany([
        rec('day_0', cut + HOUR),
        rec('day_2', cut + 2 * DAY_MS),
        rec('day_3_before', later - HOUR),
        rec('day_4_before', later - 1),
        rec('day_4_after', later),
        rec('day_5', later + DAY_MS),
        rec('unmarked', cut + DAY_MS, false),
      ]);

    expect(await purge(col, later)).toEqual({ deleted: 4, ranged: false });
    expect(await ids(col)).toEqual(['day_4_after', 'day_5', 'unmarked']);
    expect(await readCursor(db, `purge:${col}:at_day`)).toBe(bucketOf(later, DAY_MS));
  });

  it('when `only` keeps a record of a past day, then the cursor stays at that day until a later run can take it', async () => {
    const col = 'kept';
    const key = `purge:${col}:at_day`;
    await purge(col, cut, { pending: { $ne: true } });
    await db
      .collection<Rec>(col)
      .insertMany([{ ...rec('pending', cut + HOUR), pending: true }, rec('done', cut + 2 * DAY_MS)]);

    expect(await purge(col, cut + 3 * DAY_MS, { pending: { $ne: true } })).toEqual({ deleted: 1, ranged: false });
    expect(await ids(col)).toEqual(['pending']);
    expect(await readCursor(db, key)).toBe(bucketOf(cut, DAY_MS));

    await db.collection<Rec>(col).updateOne({ _id: 'pending' }, { $set: { pending: false } });
    expect(await purge(col, cut + 3 * DAY_MS, { pending: { $ne: true } })).toEqual({ deleted: 1, ranged: false });
    expect(await ids(col)).toEqual([]);
    expect(await readCursor(db, key)).toBe(bucketOf(cut + 3 * DAY_MS, DAY_MS));
  });

  it('when the cursor is moved back or written twice at once, then it keeps the highest value', async () => {
    const key = 'test:cursor';
    await Promise.all([advanceCursor(db, key, 7), advanceCursor(db, key, 5)]);
    expect([5, 7]).toContain(await readCursor(db, key));
    await advanceCursor(db, key, 9);
    await advanceCursor(db, key, 3);
    expect(await readCursor(db, key)).toBe(9);
  });
});

describe('sweepBuckets', () => {
  /** A sweep that records what it was asked: each bucket, and each range pass (visiting `ranged` records). */
  const recorder = (ranged = 3, rangeLimit?: number) => {
    const asked: (number | 'range')[] = [];
    const visits = {
      bucket: async (b: number) => (asked.push(b), 1),
      range: async () => (asked.push('range'), ranged),
      ...(rangeLimit === undefined ? {} : { rangeLimit }),
    };
    return { asked, visits };
  };

  it('when there is no cursor yet, then the range runs once and the cursor is stored; after that each bucket up to the current one is visited by equality, once, also after a stop', async () => {
    const key = 'sweep:first';
    const r = recorder();
    expect(await sweepBuckets(db, key, 100, r.visits)).toBe(3);
    expect(await readCursor(db, key)).toBe(100);
    expect(await sweepBuckets(db, key, 100, r.visits)).toBe(0);
    expect(await sweepBuckets(db, key, 104, r.visits)).toBe(4);
    expect(r.asked).toEqual(['range', 100, 101, 102, 103]);
    expect(await readCursor(db, key)).toBe(104);
  });

  it('when the range visits as many records as its limit, then the cursor is not stored and the next run ranges again', async () => {
    const key = 'sweep:limited';
    const full = recorder(5, 5);
    expect(await sweepBuckets(db, key, 10, full.visits)).toBe(5);
    expect(await readCursor(db, key)).toBeNull();
    const rest = recorder(2, 5);
    expect(await sweepBuckets(db, key, 10, rest.visits)).toBe(2);
    expect(rest.asked).toEqual(['range']);
    expect(await readCursor(db, key)).toBe(10);
  });

  it('when the cursor is more buckets behind than MAX_BUCKETS_BEHIND, then one range runs instead of a query per bucket', async () => {
    const key = 'sweep:behind';
    await advanceCursor(db, key, 1);
    const r = recorder();
    await sweepBuckets(db, key, 2 + MAX_BUCKETS_BEHIND, r.visits);
    expect(r.asked).toEqual(['range']);
    expect(await readCursor(db, key)).toBe(2 + MAX_BUCKETS_BEHIND);
  });
});

describe('purgeDedupeRecords', () => {
  it('when claims are written and completed, then each carries the day of its last write and the purge by day removes the old ones only', async () => {
    const dedupe = mongoDedupe(db, 'markers');
    const records = db.collection<Rec & { state: string }>('dedupe_markers');
    await purgeDedupeRecords(db, new Date()); // the first run stores the cursor
    await dedupe.claim('evt_done');
    await dedupe.complete('evt_done');
    await dedupe.claim('evt_processing');
    for (const r of await records.find().toArray()) expect(r.at_day).toBe(bucketOf(r.at, DAY_MS));
    await records.insertOne({ ...rec('evt_recent', Date.now() + 3 * DAY_MS), state: 'done' });

    expect(await purgeDedupeRecords(db, new Date(Date.now() + 2 * DAY_MS))).toBe(2);
    expect(await ids('dedupe_markers')).toEqual(['evt_recent']);
    expect(await dedupe.claim('evt_done')).toBe('new');
  });
});

describe('sweepExpiredLocks', () => {
  it('when a holder died, then its lock is swept by hour once expired, and a lock still held stays', async () => {
    const locks = db.collection<{ _id: string; expires_at: Date; expires_hour: number }>(LOCKS_COLLECTION);
    await sweepExpiredLocks(db); // the first run stores the cursor
    const dead = await tryDocumentLock(db, 'things', 'dead');
    expect(dead).not.toBeNull();
    for (const l of await locks.find().toArray()) expect(l.expires_hour).toBe(bucketOf(l.expires_at, HOUR));

    await sweepExpiredLocks(db);
    expect(await tryDocumentLock(db, 'things', 'dead')).toBeNull();
    await sweepExpiredLocks(db, Date.now() + 2 * HOUR + 3 * DOCUMENT_LOCK_MS);
    expect(await locks.countDocuments()).toBe(0);
    const again = await tryDocumentLock(db, 'things', 'dead');
    expect(again).not.toBeNull();
    await again?.release();
  });
});

describe('ownedBy', () => {
  const owned = async (name: string) => {
    const col = db.collection<{ _id: string; team_id: string; list_bucket: string }>(name);
    await col.createIndex({ list_bucket: 1 });
    await col.createIndex({ team_id: 1 });
    await col.insertMany([
      { _id: 'own_1', team_id: 'team_a', list_bucket: 'team_a:20000' },
      { _id: 'own_2', team_id: 'team_a', list_bucket: 'team_a:20000' },
      { _id: 'intruder', team_id: 'team_b', list_bucket: 'team_a:20000' },
      { _id: 'other_day', team_id: 'team_a', list_bucket: 'team_a:20001' },
    ]);
    return col;
  };
  const filter = { list_bucket: 'team_a:20000', ...ownedBy('team_id', 'team_a') };

  it("when a marker's read carries its owner check, then a record of another owner under that marker is left out", async () => {
    const col = await owned('owned');
    expect((await col.find(filter).sort({ _id: 1 }).toArray()).map((r) => r._id)).toEqual(['own_1', 'own_2']);
  });

  // The SQL plan is PostgreSQL's: with no PostgreSQL the local store is FerretDB over SQLite.
  (process.env.LPM_TEST_PG_DATABASE ? it : it.skip)(
    "when a marker's read carries its owner check, then FerretDB sends only the marker to SQL and matches the owner in Go",
    async () => {
      const col = await owned('owned_plan');
      // A second pushed equality has PostgreSQL read the owner's whole GIN entry (docs/ferretdb.md).
      const explained = await col.find(filter).explain();
      expect(explained).toMatchObject({ filterPushdown: true });
      expect(JSON.stringify(explained.queryPlanner)).toContain("'list_bucket'");
      expect(JSON.stringify(explained.queryPlanner)).not.toContain("'team_id'");
    },
  );
});
