import type { Db } from 'mongodb';
import { LIST_BUCKET_FIELD, ListBuckets, listBucket } from '../src/store/list-buckets.ts';
import { LIST_COUNT_DELTAS } from '../src/store/list-count-deltas.ts';
import { LIST_COUNTS } from '../src/store/list-counts.ts';
import { withDocumentLock } from '../src/store/lock.ts';
import { DAY_MS } from '../src/time.ts';
import { scratchDatabase } from '@lpm/test-kit/scratch-database';

let db: Db;

scratchDatabase('list_buckets', (opened) => (db = opened));

interface Rec {
  _id: string;
  team_id: string;
  at: Date;
  status: string;
  phase: string;
  list_bucket?: string;
}

const DAY0 = Date.parse('2026-03-01T00:00:00Z');
const lists = (collection: string) => new ListBuckets({ db, collection, order: { field: 'at', keys: ['at'] }, dayField: 'at', counted: ['status', 'phase'] });

/**
 * Records of `team` over five days, some at the very same instant (ties broken by
 * _id), some at the edges of a day, with status and phase spread.
 */
function spread(team: string, n: number): Rec[] {
  return Array.from({ length: n }, (_, i) => {
    const offsets = [0, DAY_MS - 1, DAY_MS, 2 * DAY_MS + 3_600_000, 4 * DAY_MS + 7];
    return {
      _id: `${team}_${String((i * 37) % n).padStart(3, '0')}_${i}`,
      team_id: team,
      at: new Date(DAY0 + offsets[i % offsets.length] + (i % 3 === 0 ? 0 : i)),
      status: i % 4 === 0 ? 'arquivado' : 'ativo',
      phase: ['a', 'b', 'c'][i % 3],
    };
  });
}

/** Inserts records as a record store does (marker with the record), then recounts each day once. */
async function insertMarked(buckets: ListBuckets, collection: string, records: Rec[]): Promise<void> {
  await db.collection<Rec>(collection).insertMany(records.map((r) => ({ ...r, ...buckets.markerOf(r) })));
  const days = new Map(records.map((r) => [`${r.team_id}:${Math.floor(+r.at / DAY_MS)}`, r]));
  for (const r of days.values()) await buckets.recount(r);
}

/** The page the plain query gives: every match sorted by the instant, then _id. */
async function plainPage(collection: string, filter: object, direction: 1 | -1, skip: number, limit: number) {
  const col = db.collection<Rec>(collection);
  const [records, total] = await Promise.all([
    col.find(filter, { projection: { list_bucket: 0 }, sort: { at: direction, _id: direction }, skip, limit }).toArray(),
    col.countDocuments(filter),
  ]);
  return { records, total };
}

const page = (buckets: ListBuckets, teamId: string, equal: Record<string, unknown>, direction: 1 | -1, skip: number, limit: number) =>
  buckets.page<Rec>({ teamId, equal, direction, skip, limit, projection: { list_bucket: 0 } });

describe('ListBuckets.page', () => {
  const col = 'pages';
  let buckets: ListBuckets;

  beforeAll(async () => {
    buckets = lists(col);
    await buckets.backfill(); // an empty collection: only marks it ready
    await insertMarked(buckets, col, [...spread('team_a', 60), ...spread('team_b', 7)]);
  });

  it('when pages are read newest and oldest first, with and without status and phase filters, then each is the plain sorted page with the plain total', async () => {
    const filters: Record<string, unknown>[] = [{}, { status: 'ativo' }, { phase: 'b' }, { status: 'ativo', phase: 'c' }, { status: 'arquivado', phase: 'a' }];
    for (const equal of filters) {
      for (const direction of [-1, 1] as const) {
        for (const [skip, limit] of [[0, 20], [20, 20], [7, 9], [13, 1], [40, 20], [55, 10], [100, 20]]) {
          const expected = await plainPage(col, { team_id: 'team_a', ...equal }, direction, skip, limit);
          expect({ equal, direction, skip, ...(await page(buckets, 'team_a', equal, direction, skip, limit)) }).toEqual({ equal, direction, skip, ...expected });
        }
      }
    }
  });

  it("when a record of another team carries a marker of team A's day (written straight to the store), then team A's pages and counts leave it out", async () => {
    const crafted = 'crafted';
    const b = lists(crafted);
    await b.backfill();
    const own = spread('team_a', 20);
    await insertMarked(b, crafted, own);
    const newest = own.reduce((a, r) => (r.at > a.at ? r : a));
    // Team B's record, newest of all and of a counted status and phase, under team A's marker.
    const intruder: Rec = { _id: 'zz_intruder', team_id: 'team_b', at: new Date(+newest.at + 1), status: 'ativo', phase: 'a', list_bucket: listBucket('team_a', newest.at) };
    await db.collection<Rec>(crafted).insertOne(intruder);
    await b.recount(newest);

    for (const equal of [{}, { status: 'ativo' }, { status: 'ativo', phase: 'a' }]) {
      for (const direction of [-1, 1] as const) {
        const got = (await page(b, 'team_a', equal, direction, 0, 100))!;
        expect({ equal, direction, ...got }).toEqual({ equal, direction, ...(await plainPage(crafted, { team_id: 'team_a', ...equal }, direction, 0, 100)) });
        expect(got.records.map((r) => r._id)).not.toContain(intruder._id);
      }
    }
  });

  it('when a value matches nothing, then the page is empty with total 0', async () => {
    expect(await page(buckets, 'team_a', { phase: 'z' }, -1, 0, 20)).toEqual({ records: [], total: 0 });
    expect(await page(buckets, 'team_none', {}, -1, 0, 20)).toEqual({ records: [], total: 0 });
  });

  it('when a day holds fewer records than its count says (a write after the count), then the next day fills the page', async () => {
    const stale = 'stale';
    const b = lists(stale);
    await b.backfill();
    await insertMarked(b, stale, spread('team_s', 20));
    const newest = await db.collection<Rec>(stale).find({}, { sort: { at: -1, _id: -1 } }).limit(1).next();
    await db.collection<Rec>(stale).deleteOne({ _id: newest!._id });
    const got = (await page(b, 'team_s', {}, -1, 0, 10))!;
    expect(got.total).toBe(20);
    expect(got.records).toEqual((await plainPage(stale, {}, -1, 0, 10)).records);
  });
});

describe('ListCounts under concurrent writes', () => {
  it('when two stores (two processes) insert and change records of the same days at once, each recounting after its write, then the counts match the records', async () => {
    const col = 'concurrent';
    const [one, two] = [lists(col), lists(col)];
    await one.backfill();
    const records = spread('team_c', 80);
    const write = async (buckets: ListBuckets, r: Rec) => {
      await db.collection<Rec>(col).insertOne({ ...r, ...buckets.markerOf(r) });
      await buckets.recount(r);
      if (r.status === 'ativo' && +r.at % 2 === 0) {
        await db.collection<Rec>(col).updateOne({ _id: r._id }, { $set: { status: 'arquivado' } });
        await buckets.recount(r);
      }
    };
    await Promise.all(records.map((r, i) => write(i % 2 ? one : two, r)));
    for (const equal of [{}, { status: 'ativo' }, { status: 'arquivado', phase: 'b' }]) {
      expect((await page(two, 'team_c', equal, -1, 0, 5))!.total).toBe(await db.collection(col).countDocuments({ team_id: 'team_c', ...equal }));
    }
  });
});

describe('ListBuckets.backfill', () => {
  it('when records were written before the markers, then pages take the plain query until the backfill, which marks and counts them', async () => {
    const col = 'legacy';
    const buckets = lists(col);
    await db.collection<Rec>(col).insertMany(spread('team_l', 30));
    expect(await page(buckets, 'team_l', {}, -1, 0, 10)).toBeNull();

    await buckets.backfill();
    const marked = await db.collection<Rec>(col).find({}).toArray();
    expect(marked.every((r) => r[LIST_BUCKET_FIELD] === listBucket(r.team_id, r.at))).toBe(true);
    expect(await page(buckets, 'team_l', {}, -1, 10, 10)).toEqual(await plainPage(col, {}, -1, 10, 10));
    // Another process learns it from the store.
    expect(await page(lists(col), 'team_l', { status: 'ativo' }, 1, 0, 30)).toEqual(await plainPage(col, { status: 'ativo' }, 1, 0, 30));
  });

  it('when it runs again over counts that went stale, then every day is counted from the records again, an emptied day included', async () => {
    const col = 'recount';
    const buckets = lists(col);
    await buckets.backfill();
    await insertMarked(buckets, col, spread('team_r', 25));
    await db.collection<Rec>(col).deleteMany({ at: { $gte: new Date(DAY0 + 4 * DAY_MS) } });
    await db.collection(col).updateMany({}, { $set: { phase: 'a' } });
    await db.collection('sweep_cursors').deleteOne({ _id: `list-buckets:${col}` as never });
    const again = lists(col);
    await again.backfill();
    expect(await page(again, 'team_r', { phase: 'a' }, -1, 0, 25)).toEqual(await plainPage(col, {}, -1, 0, 25));
    const counted = (await db.collection(LIST_COUNTS).find({ owner: `${col}:team_r` }).toArray()).flatMap((doc) => JSON.parse(doc.days).filter((x: { n: number }) => x.n > 0).map((x: { d: number }) => x.d));
    expect(counted).not.toContain(Math.floor((DAY0 + 4 * DAY_MS) / DAY_MS));
  });
});

describe('ListBuckets when a field is counted by a newer version', () => {
  // The older version counts status only; the newer one counts phase too.
  const older = (collection: string) => new ListBuckets({ db, collection, order: { field: 'at', keys: ['at'] }, dayField: 'at', counted: ['status'] });

  /** Retries `read` until it answers (not null), for up to 10 s. */
  async function answered<T>(read: () => Promise<T | null>): Promise<T> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const got = await read();
      if (got !== null || Date.now() > deadline) return got as T;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('when days were counted without it, then a page filtered on it takes the plain query until those days are counted again, and other pages are answered at once', async () => {
    const col = 'grown';
    const old = older(col);
    await old.backfill();
    await insertMarked(old, col, spread('team_g', 30));
    const newer = lists(col);
    expect(await page(newer, 'team_g', { status: 'ativo' }, -1, 0, 10)).toEqual(await plainPage(col, { status: 'ativo' }, -1, 0, 10));
    expect(await page(newer, 'team_g', { phase: 'b' }, -1, 0, 10)).toBeNull();
    expect(await answered(() => page(newer, 'team_g', { phase: 'b' }, -1, 0, 10))).toEqual(await plainPage(col, { phase: 'b' }, -1, 0, 10));

    // An older replica still running (a rolling deploy) counts a new record without it.
    const late = { _id: 'late', team_id: 'team_g', at: new Date(DAY0), status: 'ativo', phase: 'b' };
    await db.collection<Rec>(col).insertOne({ ...late, ...old.markerOf(late) });
    await old.added(late, Date.now());
    expect(await page(newer, 'team_g', { status: 'ativo', phase: 'b' }, 1, 0, 30)).toBeNull();
    expect(await answered(() => page(newer, 'team_g', { status: 'ativo', phase: 'b' }, 1, 0, 30))).toEqual(await plainPage(col, { status: 'ativo', phase: 'b' }, 1, 0, 30));
  });

  it('when the newer version starts, then it counts again every day counted without the field, before any page asks', async () => {
    const col = 'grown_start';
    const old = older(col);
    await old.backfill();
    await insertMarked(old, col, spread('team_h', 25));
    const newer = lists(col);
    await newer.backfill(); // the start's pass
    expect(await page(newer, 'team_h', { status: 'arquivado', phase: 'a' }, -1, 0, 25)).toEqual(await plainPage(col, { status: 'arquivado', phase: 'a' }, -1, 0, 25));
  });
});

describe('ListBuckets of a sort value a write may change or leave out', () => {
  interface Due {
    _id: string;
    team_id: string;
    /** 1 without a due instant: last in either direction, as the plain sort puts it. */
    missing: number;
    due: Date | null;
    status: string;
  }
  const col = 'movable';
  const movable = () => new ListBuckets({ db, collection: col, order: { field: 'due', keys: ['missing', 'due'] }, dayField: 'due', counted: ['status'] });
  const plainDue = async (direction: 1 | -1, skip: number, limit: number, filter: object = {}) => {
    const c = db.collection<Due>(col);
    const q = { team_id: 'team_m', ...filter };
    const ids = (await c.find(q, { projection: { _id: 1 }, sort: { missing: 1, due: direction, _id: direction }, skip, limit }).toArray()).map((r) => r._id);
    return { ids, total: await c.countDocuments(q) };
  };
  const bucketDue = async (buckets: ListBuckets, direction: 1 | -1, skip: number, limit: number, equal: Record<string, unknown> = {}) => {
    const got = (await buckets.page<Due>({ teamId: 'team_m', equal, direction, skip, limit, projection: { _id: 1 } }))!;
    return { ids: got.records.map((r) => r._id), total: got.total };
  };
  /** An update as the record store writes it (the marker with the sort value), then what the counts need of it. */
  const update = async (buckets: ListBuckets, id: string, set: Partial<Due>) => {
    const current = (await db.collection<Due>(col).findOne({ _id: id }))!;
    await db.collection<Due>(col).updateOne({ _id: id }, { $set: { ...set, ...buckets.markerOfUpdate(current, set) } });
    await buckets.written(current, set, Date.now());
  };
  let buckets: ListBuckets;
  let records: Due[];

  beforeAll(async () => {
    buckets = movable();
    await buckets.backfill();
    records = Array.from({ length: 30 }, (_, i) => {
      const due = i % 7 === 6 ? null : new Date(DAY0 + (i % 4) * DAY_MS + (i % 3 === 0 ? 0 : i * 60_000));
      return { _id: `m_${String((i * 11) % 30).padStart(2, '0')}_${i}`, team_id: 'team_m', missing: due ? 0 : 1, due, status: i % 2 ? 'open' : 'done' };
    });
    await db.collection<Due>(col).insertMany(records.map((r) => ({ ...r, ...buckets.markerOf(r) })));
    for (const r of records) await buckets.recount(r);
  });

  it('when some records have no value, then they are in the team:none bucket, read after every day in either direction', async () => {
    expect(buckets.markerOf(records[6])).toEqual({ [LIST_BUCKET_FIELD]: 'team_m:none' });
    for (const direction of [1, -1] as const) {
      for (const [skip, limit] of [[0, 30], [20, 10], [24, 3], [3, 8]]) expect(await bucketDue(buckets, direction, skip, limit)).toEqual(await plainDue(direction, skip, limit));
    }
  });

  it('when writes move records to other days, take their value away or give them one, or change a counted field, then pages count each as it is now', async () => {
    await update(buckets, records[0]._id, { due: new Date(DAY0 + 9 * DAY_MS) }); // to a new day
    await update(buckets, records[1]._id, { due: null, missing: 1 }); // to none
    await update(buckets, records[6]._id, { due: new Date(DAY0 - DAY_MS), missing: 0 }); // from none
    await update(buckets, records[2]._id, { due: new Date(+records[2].due! + 1000) }); // the same day
    await update(buckets, records[3]._id, { status: 'open' }); // a counted field only
    const other = movable(); // another process reads the counts
    for (const direction of [1, -1] as const) {
      expect(await bucketDue(other, direction, 0, 30)).toEqual(await plainDue(direction, 0, 30));
      expect(await bucketDue(other, direction, 2, 9, { status: 'open' })).toEqual(await plainDue(direction, 2, 9, { status: 'open' }));
    }
  });

  it('when a write changes only a counted field, then one delta carries the record from its old value to its new one, with no recount, and pages count it at once', async () => {
    const moved = records[5];
    const before = (await db.collection<Due>(col).findOne({ _id: moved._id }))!;
    const status = before.status === 'open' ? 'done' : 'open';
    const countsBefore = await db.collection(LIST_COUNTS).find({ owner: `${col}:team_m` }).toArray();
    await update(buckets, moved._id, { status });
    const moves = await db.collection(LIST_COUNT_DELTAS).find({ owner: `${col}:team_m`, from: { $exists: true } }).toArray();
    expect(moves).toHaveLength(1);
    expect(moves[0]).toMatchObject({ from: { status: before.status }, v: { status } });
    expect(await db.collection(LIST_COUNTS).find({ owner: `${col}:team_m` }).toArray()).toEqual(countsBefore);
    const other = movable();
    for (const direction of [1, -1] as const) {
      for (const s of ['open', 'done']) expect(await bucketDue(other, direction, 0, 30, { status: s })).toEqual(await plainDue(direction, 0, 30, { status: s }));
    }
  });

  it('when a page asks for a range of days, then only those days are read and counted, the records without a value left out', async () => {
    const day = (n: number) => Math.floor(DAY0 / DAY_MS) + n;
    const range = { due: { $gte: new Date(DAY0 + DAY_MS), $lt: new Date(DAY0 + 3 * DAY_MS) } };
    for (const direction of [1, -1] as const) {
      const got = (await buckets.page<Due>({ teamId: 'team_m', equal: {}, days: { from: day(1), to: day(2) }, direction, skip: 2, limit: 5, projection: { _id: 1 } }))!;
      expect({ ids: got.records.map((r) => r._id), total: got.total }).toEqual(await plainDue(direction, 2, 5, range));
    }
  });
});

describe('ListBuckets.added', () => {
  const col = 'deltas';

  it('when 40 records are added at once, then each is counted once, by delta, with its counted values', async () => {
    const buckets = lists(col);
    await buckets.backfill();
    const records = spread('team_d', 40);
    await db.collection<Rec>(col).insertMany(records.map((r) => ({ ...r, ...buckets.markerOf(r) })));
    await Promise.all(records.map((r) => buckets.added(r, Date.now())));
    const plain = await plainPage(col, { team_id: 'team_d', status: 'ativo', phase: 'b' }, -1, 0, 100);
    const paged = await page(buckets, 'team_d', { status: 'ativo', phase: 'b' }, -1, 0, 100);
    expect(paged!.total).toBe(plain.total);
    expect((await page(buckets, 'team_d', {}, -1, 0, 100))!.total).toBe(40);
  });

  it('when a delta was counted for a record that never got stored (a writer died, or a recount raced it), then the next start counts the day again', async () => {
    const buckets = lists(col);
    const ghost = { _id: 'ghost', team_id: 'team_e', at: new Date(DAY0), status: 'ativo', phase: 'a' };
    const real = { ...ghost, _id: 'real' };
    await db.collection<Rec>(col).insertOne({ ...real, ...buckets.markerOf(real) });
    await buckets.added(real, Date.now());
    await buckets.added(ghost, Date.now());
    expect((await page(buckets, 'team_e', {}, -1, 0, 10))!.total).toBe(2);
    await lists(col).backfill(); // a process starting
    expect((await page(buckets, 'team_e', {}, -1, 0, 10))!.total).toBe(1);
  });
});

describe('ListCounts deltas', () => {
  const col = 'folds';
  const rec = (id: string, team: string, status = 'ativo') => ({ _id: id, team_id: team, at: new Date(DAY0), status, phase: 'a' });
  const store = async (buckets: ListBuckets, r: Rec) => {
    await db.collection<Rec>(col).insertOne({ ...r, ...buckets.markerOf(r) });
    await buckets.added(r, Date.now());
  };
  const deltasOf = (team: string) => db.collection(LIST_COUNT_DELTAS).countDocuments({ owner: `${col}:${team}` });
  const countsDoc = (team: string) => `${col}:${team}:${Math.floor(Math.floor(DAY0 / DAY_MS) / 32)}`;

  it('when the counts document is locked (a recount or fold under way elsewhere), then a new record is counted on a page at once all the same', async () => {
    const buckets = lists(col);
    await buckets.backfill();
    await store(buckets, rec('f1', 'team_f'));
    let release!: () => void;
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const held = withDocumentLock(db, LIST_COUNTS, countsDoc('team_f'), () => {
      locked();
      return new Promise<void>((r) => (release = r));
    });
    await isLocked;
    await Promise.all([store(buckets, rec('f2', 'team_f')), store(buckets, rec('f3', 'team_f', 'arquivado'))]);
    expect((await page(buckets, 'team_f', {}, -1, 0, 10))!.total).toBe(3);
    expect((await page(buckets, 'team_f', { status: 'arquivado' }, -1, 0, 10))!.total).toBe(1);
    release();
    await held;
    await buckets.counts.fold('team_f', countsDoc('team_f'));
    expect(await deltasOf('team_f')).toBe(0);
    expect((await page(buckets, 'team_f', {}, -1, 0, 10))!.total).toBe(3);
    expect((await page(buckets, 'team_f', { status: 'arquivado' }, -1, 0, 10))!.total).toBe(1);
  });

  it('when a fold stored the counts but died before deleting its deltas, then they are counted once, and the next fold deletes them', async () => {
    const buckets = lists(col);
    await store(buckets, rec('g1', 'team_g'));
    await store(buckets, rec('g2', 'team_g'));
    const left = await db.collection(LIST_COUNT_DELTAS).find({ owner: `${col}:team_g` }).toArray();
    await buckets.counts.fold('team_g', countsDoc('team_g'));
    await db.collection(LIST_COUNT_DELTAS).insertMany(left);
    expect((await page(buckets, 'team_g', {}, -1, 0, 10))!.total).toBe(2);
    await store(buckets, rec('g3', 'team_g'));
    await buckets.counts.fold('team_g', countsDoc('team_g'));
    expect(await deltasOf('team_g')).toBe(0);
    expect((await page(buckets, 'team_g', {}, -1, 0, 10))!.total).toBe(3);
  });

  it('when a process stops before folding its deltas, then the next start folds them', async () => {
    await store(lists(col), rec('h1', 'team_h'));
    expect(await deltasOf('team_h')).toBe(1);
    const next = lists(col);
    await next.backfill();
    expect(await deltasOf('team_h')).toBe(0);
    expect((await page(next, 'team_h', {}, -1, 0, 10))!.total).toBe(1);
  });
});

test('when a recount reads a new record before its delta lands, then the delta is not added on top', async () => {
  const buckets = lists('raced');
  await buckets.backfill();
  const first = { _id: 'first', team_id: 'team_r', at: new Date(DAY0), status: 'ativo', phase: 'a' };
  const second = { ...first, _id: 'second' };
  for (const r of [first, second]) await db.collection<Rec>('raced').insertOne({ ...r, ...buckets.markerOf(r) });
  await buckets.added(first, Date.now());
  const secondStoredAt = Date.now();
  await new Promise((r) => setTimeout(r, 5));
  await buckets.recount(second); // reads both records
  await buckets.added(second, secondStoredAt);
  expect((await page(buckets, 'team_r', {}, -1, 0, 10))!.total).toBe(2);
});
