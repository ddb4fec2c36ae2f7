import { MongoClient, type Db } from 'mongodb';
import { advanceCursor, bucketOf, purgeByMarker, readCursor } from '../src/store/markers.ts';
import { mongoDedupe, purgeDedupeRecords } from '../src/messaging/dedupe.ts';
import { DOCUMENT_LOCK_MS, LOCKS_COLLECTION, sweepExpiredLocks, tryDocumentLock } from '../src/store/lock.ts';
import { DAY_MS } from '../src/time.ts';

const HOUR = 3_600_000;
let client: MongoClient;
let db: Db;

beforeAll(async () => {
  client = await MongoClient.connect(process.env.MONGO_URL!);
  db = client.db(`${process.env.MONGO_DB_PREFIX}markers`);
});

afterAll(async () => {
  await db.dropDatabase();
  await client.close();
});

interface Rec {
  _id: string;
  at: Date;
  at_day?: number;
  pending?: boolean;
}

const ids = async (collection: string) => (await db.collection<Rec>(collection).find().toArray()).map((r) => r._id).sort();
/** A record at `at` with its day marker, or without one (written before markers). */
const rec = (_id: string, at: number, marked = true): Rec => ({ _id, at: new Date(at), ...(marked ? { at_day: bucketOf(at, DAY_MS) } : {}) });

describe('purgeByMarker', () => {
  // Noon: the boundary day holds records on both sides of the cut.
  const cut = Date.parse('2026-06-10T12:00:00Z');
  const purge = (collection: string, before: number, only?: object) =>
    purgeByMarker(db, { collection, timeField: 'at', markerField: 'at_day', bucketMs: DAY_MS, before: new Date(before), only });

  it('when there is no cursor yet, then one range delete also takes the records without a marker, and the cursor is stored at the boundary day', async () => {
    const col = 'first_run';
    await db.collection<Rec>(col).insertMany([rec('legacy_old', cut - 3 * DAY_MS, false), rec('legacy_new', cut + HOUR, false), rec('old', cut - 1), rec('new', cut)]);

    expect(await purge(col, cut)).toBe(2);
    expect(await ids(col)).toEqual(['legacy_new', 'new']);
    expect(await readCursor(db, `purge:${col}:at_day`)).toBe(bucketOf(cut, DAY_MS));
  });

  it('when the cursor is there, then whole past days go by marker (no range over the collection) and the boundary day only before the cut, also after days without a run', async () => {
    const col = 'by_marker';
    await purge(col, cut); // stores the cursor
    const later = cut + 4 * DAY_MS;
    await db.collection<Rec>(col).insertMany([
      rec('day_0', cut + HOUR),
      rec('day_2', cut + 2 * DAY_MS),
      rec('day_3_before', later - HOUR),
      rec('day_4_before', later - 1),
      rec('day_4_after', later),
      rec('day_5', later + DAY_MS),
      rec('unmarked', cut + DAY_MS, false),
    ]);

    expect(await purge(col, later)).toBe(4);
    expect(await ids(col)).toEqual(['day_4_after', 'day_5', 'unmarked']);
    expect(await readCursor(db, `purge:${col}:at_day`)).toBe(bucketOf(later, DAY_MS));
  });

  it('when `only` keeps a record of a past day, then the cursor stays at that day until a later run can take it', async () => {
    const col = 'kept';
    const key = `purge:${col}:at_day`;
    await purge(col, cut, { pending: { $ne: true } });
    await db.collection<Rec>(col).insertMany([{ ...rec('pending', cut + HOUR), pending: true }, rec('done', cut + 2 * DAY_MS)]);

    expect(await purge(col, cut + 3 * DAY_MS, { pending: { $ne: true } })).toBe(1);
    expect(await ids(col)).toEqual(['pending']);
    expect(await readCursor(db, key)).toBe(bucketOf(cut, DAY_MS));

    await db.collection<Rec>(col).updateOne({ _id: 'pending' }, { $set: { pending: false } });
    expect(await purge(col, cut + 3 * DAY_MS, { pending: { $ne: true } })).toBe(1);
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
