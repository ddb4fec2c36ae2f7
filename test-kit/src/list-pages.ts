// A list's pages compared three ways: as the API answers, as the plain query gives
// them (every match sorted and counted in the store), and straight from the day
// buckets (store/list-buckets.ts), which must be ready and give the same ids and total.
import type { Db } from 'mongodb';
import { storeSort } from '@lpm/shared/http/pagination';
import type { DayRange, ListBuckets } from '@lpm/shared/store/list-buckets';

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

export interface ListUnderTest {
  db: Db;
  collection: string;
  lists: ListBuckets;
  /** The stored keys of the list's default order (as sortOrder takes them). */
  sortKeys: readonly string[];
  /** The API's page: GET of the list with this query string. */
  api(query: string): Promise<IdsPage>;
}

export async function plainIds(db: Db, collection: string, filter: object, sort: Record<string, 1 | -1>, skip: number, limit: number): Promise<IdsPage> {
  const col = db.collection(collection);
  const ids = (await col.find(filter, { projection: { _id: 1 }, sort, skip, limit }).toArray()).map((r) => String(r._id));
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
  const page = await lists.page<{ _id: string }>({ teamId, equal, days, direction, skip, limit, projection: { _id: 1 } });
  return page && { ids: page.records.map((r) => r._id), total: page.total };
}

/** For every check and window ([page, limit]): the API's page, the plain query's and the buckets' are the same. */
export async function expectSamePages(list: ListUnderTest, teamId: string, checks: PageCheck[], windows: [number, number][]): Promise<void> {
  for (const { query, equal, direction, range } of checks) {
    for (const [page, limit] of windows) {
      const skip = (page - 1) * limit;
      const plain = await plainIds(list.db, list.collection, { team_id: teamId, ...equal, ...range?.filter }, storeSort(list.sortKeys, direction), skip, limit);
      const seen = { query, page, limit };
      expect({ ...seen, api: await list.api(`${query}&page=${page}&limit=${limit}`), buckets: await bucketIds(list.lists, teamId, equal, direction, skip, limit, range?.days) }).toEqual({
        ...seen,
        api: plain,
        buckets: plain,
      });
    }
  }
}
