// ListBuckets as writes change what they count: a sort value a write changes or
// leaves out, records added, and count deltas (the pages: list-buckets.test.ts).
import { LIST_BUCKET_FIELD, ListBuckets } from '../src/store/list-buckets.ts';
import { LIST_COUNT_DELTAS } from '../src/store/list-count-deltas.ts';
import { LIST_COUNTS } from '../src/store/list-counts.ts';
import { withDocumentLock } from '../src/store/lock.ts';
import { DAY_MS } from '../src/time.ts';
import { DAY0, db, listBucketsSuite, lists, page, plainPage, spread, type Rec } from './list-buckets-suite.ts';

listBucketsSuite('list_buckets_writes');

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
  const movable = () =>
    new ListBuckets({
      db,
      collection: col,
      order: { field: 'due', keys: ['missing', 'due'] },
      dayField: 'due',
      counted: ['status'],
    });
  const plainDue = async (direction: 1 | -1, skip: number, limit: number, filter: object = {}) => {
    const c = db.collection<Due>(col);
    const q = { team_id: 'team_m', ...filter };
    const ids = (
      await c
        .find(q, { projection: { _id: 1 }, sort: { missing: 1, due: direction, _id: direction }, skip, limit })
        .toArray()
    ).map((r) => r._id);
    return { ids, total: await c.countDocuments(q) };
  };
  const bucketDue = async (
    buckets: ListBuckets,
    direction: 1 | -1,
    skip: number,
    limit: number,
    equal: Record<string, unknown> = {},
  ) => {
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
      return {
        _id: `m_${String((i * 11) % 30).padStart(2, '0')}_${i}`,
        team_id: 'team_m',
        missing: due ? 0 : 1,
        due,
        status: i % 2 ? 'open' : 'done',
      };
    });
    await db.collection<Due>(col).insertMany(records.map((r) => ({ ...r, ...buckets.markerOf(r) })));
    for (const r of records) await buckets.recount(r);
  });

  it('when some records have no value, then they are in the team:none bucket, read after every day in either direction', async () => {
    expect(buckets.markerOf(records[6])).toEqual({ [LIST_BUCKET_FIELD]: 'team_m:none' });
    for (const direction of [1, -1] as const) {
      for (const [skip, limit] of [
        [0, 30],
        [20, 10],
        [24, 3],
        [3, 8],
      ])
        expect(await bucketDue(buckets, direction, skip, limit)).toEqual(await plainDue(direction, skip, limit));
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
      expect(await bucketDue(other, direction, 2, 9, { status: 'open' })).toEqual(
        await plainDue(direction, 2, 9, { status: 'open' }),
      );
    }
  });

  it('when a write changes only a counted field, then one delta carries the record from its old value to its new one, with no recount, and pages count it at once', async () => {
    const moved = records[5];
    const before = (await db.collection<Due>(col).findOne({ _id: moved._id }))!;
    const status = before.status === 'open' ? 'done' : 'open';
    const countsBefore = await db
      .collection(LIST_COUNTS)
      .find({ owner: `${col}:team_m` })
      .toArray();
    await update(buckets, moved._id, { status });
    const moves = await db
      .collection(LIST_COUNT_DELTAS)
      .find({ owner: `${col}:team_m`, from: { $exists: true } })
      .toArray();
    expect(moves).toHaveLength(1);
    expect(moves[0]).toMatchObject({ from: { status: before.status }, v: { status } });
    expect(
      await db
        .collection(LIST_COUNTS)
        .find({ owner: `${col}:team_m` })
        .toArray(),
    ).toEqual(countsBefore);
    const other = movable();
    for (const direction of [1, -1] as const) {
      for (const s of ['open', 'done'])
        expect(await bucketDue(other, direction, 0, 30, { status: s })).toEqual(
          await plainDue(direction, 0, 30, { status: s }),
        );
    }
  });

  it('when a page asks for a range of days, then only those days are read and counted, the records without a value left out', async () => {
    const day = (n: number) => Math.floor(DAY0 / DAY_MS) + n;
    const range = { due: { $gte: new Date(DAY0 + DAY_MS), $lt: new Date(DAY0 + 3 * DAY_MS) } };
    for (const direction of [1, -1] as const) {
      const got = (await buckets.page<Due>({
        teamId: 'team_m',
        equal: {},
        days: { from: day(1), to: day(2) },
        direction,
        skip: 2,
        limit: 5,
        projection: { _id: 1 },
      }))!;
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
  const rec = (id: string, team: string, status = 'ativo') => ({
    _id: id,
    team_id: team,
    at: new Date(DAY0),
    status,
    phase: 'a',
  });
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
    const left = await db
      .collection(LIST_COUNT_DELTAS)
      .find({ owner: `${col}:team_g` })
      .toArray();
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
