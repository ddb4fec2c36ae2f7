// ListBuckets: pages by day buckets are the plain query's, under concurrent writes,
// after the backfill and with a field a newer version counts (sort values, added
// records and count deltas: list-buckets-writes.test.ts).
import { LIST_BUCKET_FIELD, ListBuckets, listBucket } from '../src/store/list-buckets.ts';
import { LIST_COUNTS } from '../src/store/list-counts.ts';
import { DAY_MS } from '../src/time.ts';
import {
  DAY0,
  db,
  insertMarked,
  listBucketsSuite,
  lists,
  page,
  plainPage,
  spread,
  type Rec,
} from './list-buckets-suite.ts';

listBucketsSuite('list_buckets');

describe('ListBuckets.page', () => {
  const col = 'pages';
  let buckets: ListBuckets;

  beforeAll(async () => {
    buckets = lists(col);
    await buckets.backfill(); // an empty collection: only marks it ready
    await insertMarked(buckets, col, [...spread('team_a', 60), ...spread('team_b', 7)]);
  });

  it('when pages are read newest and oldest first, with and without status and phase filters, then each is the plain sorted page with the plain total', async () => {
    const filters: Record<string, unknown>[] = [
      {},
      { status: 'ativo' },
      { phase: 'b' },
      { status: 'ativo', phase: 'c' },
      { status: 'arquivado', phase: 'a' },
    ];
    for (const equal of filters) {
      for (const direction of [-1, 1] as const) {
        for (const [skip, limit] of [
          [0, 20],
          [20, 20],
          [7, 9],
          [13, 1],
          [40, 20],
          [55, 10],
          [100, 20],
        ]) {
          const expected = await plainPage(col, { team_id: 'team_a', ...equal }, direction, skip, limit);
          expect({ equal, direction, skip, ...(await page(buckets, 'team_a', equal, direction, skip, limit)) }).toEqual(
            { equal, direction, skip, ...expected },
          );
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
    const intruder: Rec = {
      _id: 'zz_intruder',
      team_id: 'team_b',
      at: new Date(+newest.at + 1),
      status: 'ativo',
      phase: 'a',
      list_bucket: listBucket('team_a', newest.at),
    };
    await db.collection<Rec>(crafted).insertOne(intruder);
    await b.recount(newest);

    for (const equal of [{}, { status: 'ativo' }, { status: 'ativo', phase: 'a' }]) {
      for (const direction of [-1, 1] as const) {
        const got = (await page(b, 'team_a', equal, direction, 0, 100))!;
        expect({ equal, direction, ...got }).toEqual({
          equal,
          direction,
          ...(await plainPage(crafted, { team_id: 'team_a', ...equal }, direction, 0, 100)),
        });
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
    const newest = await db
      .collection<Rec>(stale)
      .find({}, { sort: { at: -1, _id: -1 } })
      .limit(1)
      .next();
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
      expect((await page(two, 'team_c', equal, -1, 0, 5))!.total).toBe(
        await db.collection(col).countDocuments({ team_id: 'team_c', ...equal }),
      );
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
    expect(await page(lists(col), 'team_l', { status: 'ativo' }, 1, 0, 30)).toEqual(
      await plainPage(col, { status: 'ativo' }, 1, 0, 30),
    );
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
    const counted = (
      await db
        .collection(LIST_COUNTS)
        .find({ owner: `${col}:team_r` })
        .toArray()
    ).flatMap((doc) =>
      JSON.parse(doc.days)
        .filter((x: { n: number }) => x.n > 0)
        .map((x: { d: number }) => x.d),
    );
    expect(counted).not.toContain(Math.floor((DAY0 + 4 * DAY_MS) / DAY_MS));
  });
});

describe('ListBuckets when a field is counted by a newer version', () => {
  // The older version counts status only; the newer one counts phase too.
  const older = (collection: string) =>
    new ListBuckets({ db, collection, order: { field: 'at', keys: ['at'] }, dayField: 'at', counted: ['status'] });

  /** `count` records of `teamId` in `col`, counted by the older version: its lists, and the newer version's. */
  async function countedByOlder(col: string, teamId: string, count: number) {
    const old = older(col);
    await old.backfill();
    await insertMarked(old, col, spread(teamId, count));
    return { old, newer: lists(col) };
  }

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
    const { old, newer } = await countedByOlder(col, 'team_g', 30);
    expect(await page(newer, 'team_g', { status: 'ativo' }, -1, 0, 10)).toEqual(
      await plainPage(col, { status: 'ativo' }, -1, 0, 10),
    );
    expect(await page(newer, 'team_g', { phase: 'b' }, -1, 0, 10)).toBeNull();
    expect(await answered(() => page(newer, 'team_g', { phase: 'b' }, -1, 0, 10))).toEqual(
      await plainPage(col, { phase: 'b' }, -1, 0, 10),
    );

    // An older replica still running (a rolling deploy) counts a new record without it.
    const late = { _id: 'late', team_id: 'team_g', at: new Date(DAY0), status: 'ativo', phase: 'b' };
    await db.collection<Rec>(col).insertOne({ ...late, ...old.markerOf(late) });
    await old.added(late, Date.now());
    expect(await page(newer, 'team_g', { status: 'ativo', phase: 'b' }, 1, 0, 30)).toBeNull();
    expect(await answered(() => page(newer, 'team_g', { status: 'ativo', phase: 'b' }, 1, 0, 30))).toEqual(
      await plainPage(col, { status: 'ativo', phase: 'b' }, 1, 0, 30),
    );
  });

  it('when the newer version starts, then it counts again every day counted without the field, before any page asks', async () => {
    const col = 'grown_start';
    const { newer } = await countedByOlder(col, 'team_h', 25);
    await newer.backfill(); // the start's pass
    expect(await page(newer, 'team_h', { status: 'arquivado', phase: 'a' }, -1, 0, 25)).toEqual(
      await plainPage(col, { status: 'arquivado', phase: 'a' }, -1, 0, 25),
    );
  });
});
