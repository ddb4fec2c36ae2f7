// A list's pages compared three ways: as the API answers, as the plain query gives
// them (every match sorted and counted in the store), and straight from the day
// buckets (store/list-buckets.ts), which must be ready and give the same ids and total.
import type { LightMyRequestResponse } from 'fastify';
import { MongoClient, type Db } from 'mongodb';
import { storeSort } from '@lpm/shared/http/pagination';
import { newId, type IdKind } from '@lpm/shared/ids';
import type { DayRange, ListBuckets } from '@lpm/shared/store/list-buckets';
import { DAY_MS } from '@lpm/shared/time';

export interface IdsPage {
  ids: string[];
  total: number;
}

export interface PageCheck {
  /** The list's query string without page and limit. */
  query: string;
  /** Its filters as stored equalities on counted fields. */
  equal: Record<string, unknown>;
  direction: 1 | -1;
  /** A range of days it asks for: as the buckets take it, and as the plain query's filter. */
  range?: { days: DayRange; filter: object };
}

/** Windows ([page, limit]) over a list of some forty records: whole pages, short ones, and past its end. */
export const WINDOWS_OVER_FORTY: [number, number][] = [
  [1, 20],
  [2, 20],
  [3, 20],
  [2, 7],
  [5, 4],
  [4, 11],
  [9, 5],
];

/** Windows over a list of some twenty records: all of it at once, and short pages. */
export const WINDOWS_OVER_TWENTY: [number, number][] = [
  [1, 100],
  [2, 6],
  [3, 5],
];

export interface ListUnderTest {
  db: Db;
  collection: string;
  lists: ListBuckets;
  /** The stored keys of the list's default order (as sortOrder takes them). */
  sortKeys: readonly string[];
  /** The API's page: GET of the list with this query string. */
  api(query: string): Promise<IdsPage>;
}

export async function plainIds(
  db: Db,
  collection: string,
  filter: object,
  sort: Record<string, 1 | -1>,
  skip: number,
  limit: number,
): Promise<IdsPage> {
  const col = db.collection(collection);
  const ids = (await col.find(filter, { projection: { _id: 1 }, sort, skip, limit }).toArray()).map((r) =>
    String(r._id),
  );
  return { ids, total: await col.countDocuments(filter) };
}

/** The page straight from the buckets; null when they are not ready. */
export async function bucketIds(
  lists: ListBuckets,
  teamId: string,
  equal: Record<string, unknown>,
  direction: 1 | -1,
  skip: number,
  limit: number,
  days?: DayRange,
): Promise<IdsPage | null> {
  const page = await lists.page<{ _id: string }>({
    teamId,
    equal,
    days,
    direction,
    skip,
    limit,
    projection: { _id: 1 },
  });
  return page && { ids: page.records.map((r) => r._id), total: page.total };
}

/** For every check and window ([page, limit]): the API's page, the plain query's and the buckets' are the same. */
export async function expectSamePages(
  list: ListUnderTest,
  teamId: string,
  checks: PageCheck[],
  windows: [number, number][],
): Promise<void> {
  for (const { query, equal, direction, range } of checks) {
    for (const [page, limit] of windows) {
      const skip = (page - 1) * limit;
      const plain = await plainIds(
        list.db,
        list.collection,
        { team_id: teamId, ...equal, ...range?.filter },
        storeSort(list.sortKeys, direction),
        skip,
        limit,
      );
      const seen = { query, page, limit };
      expect({
        ...seen,
        api: await list.api(`${query}&page=${page}&limit=${limit}`),
        buckets: await bucketIds(list.lists, teamId, equal, direction, skip, limit, range?.days),
      }).toEqual({
        ...seen,
        api: plain,
        buckets: plain,
      });
    }
  }
}

/** A list as its API answers it: `get` sends GET of the list with a query string. */
export function listThroughApi(
  list: Omit<ListUnderTest, 'api'> & { get: (query: string) => Promise<LightMyRequestResponse> },
): ListUnderTest {
  const { get, ...rest } = list;
  return {
    ...rest,
    api: async (query) => idsOf(await get(query)),
  };
}

/** The ids and total of a list's 200 answer. */
export function idsOf(res: LightMyRequestResponse): IdsPage {
  expect(res.statusCode).toBe(200);
  const body = res.json();
  return { ids: body.data.map((r: { id: string }) => r.id), total: body.pagination.total };
}

/** A repository's list as a service's records are read before and after the backfill of its buckets. */
export interface ListedRepository {
  lists: ListBuckets;
  list(
    teamId: string,
    filter: object,
    page: { page: number; limit: number },
  ): Promise<{ records: { _id: string }[]; total: number }>;
}

export interface LegacyRecordsCheck<R extends object> {
  /** The service's database: the check writes to a scratch one beside it, and drops it. */
  db: Db;
  collection: string;
  teamId: string;
  sortKeys: readonly string[];
  /** The list's default direction. */
  direction: 1 | -1;
  /** A record as the service stores it today; its copies lose their bucket marker. */
  template: R;
  /** The `i`th record stored before the markers existed, from the template's fields. */
  legacy(fields: Omit<R, 'list_bucket'>, i: number): object;
  count: number;
  /** A filter every legacy record matches, read from the buckets after the backfill. */
  equal: Record<string, unknown>;
  /** The service's repository on a database (a process starting on it). */
  repository(db: Db): ListedRepository;
}

/**
 * The legacy records of a list newest first by created_at: each with an id of its own,
 * its unique `keys` as a record without those values stores them (none:<id>), and
 * created 0.7 days before the one before it.
 */
export function createdApart<R extends object>(kind: IdKind, keys: string[]): LegacyRecordsCheck<R>['legacy'] {
  return (fields, i) => {
    const _id = newId(kind);
    const none = Object.fromEntries(keys.map((key) => [key, `none:${_id}`]));
    return { ...fields, _id, ...none, created_at: new Date(Date.now() - i * 0.7 * DAY_MS) };
  };
}

/**
 * Records stored before the bucket markers existed are listed by the plain query
 * until the backfill, and by the buckets after it, with the same pages.
 */
export async function expectBackfillKeepsPages<R extends object>(check: LegacyRecordsCheck<R>): Promise<void> {
  const client = await MongoClient.connect(process.env.MONGO_URL!);
  const db = client.db(`${check.db.databaseName}_legacy`);
  try {
    const { list_bucket: _marker, ...fields } = check.template as R & { list_bucket?: string };
    await db
      .collection(check.collection)
      .insertMany(Array.from({ length: check.count }, (_, i) => check.legacy(fields, i)));
    const before = check.repository(db);
    const plain = (direction: 1 | -1) =>
      plainIds(db, check.collection, { team_id: check.teamId }, storeSort(check.sortKeys, direction), 5, 5);
    expect(await bucketIds(before.lists, check.teamId, {}, check.direction, 5, 5)).toBeNull();
    const page = await before.list(check.teamId, {}, { page: 2, limit: 5 });
    expect({ ids: page.records.map((r) => r._id), total: page.total }).toEqual(await plain(check.direction));

    await before.lists.backfill();
    // Another process, started after the backfill.
    const after = check.repository(db);
    for (const direction of [1, -1] as const)
      expect(await bucketIds(after.lists, check.teamId, check.equal, direction, 5, 5)).toEqual(await plain(direction));
    expect((await plain(-1)).total).toBe(check.count);
  } finally {
    await db.dropDatabase();
    await client.close();
  }
}
