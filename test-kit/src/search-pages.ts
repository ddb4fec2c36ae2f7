// A list's search answered in process, compared with the plain query's page for the
// same query string: every search crossed with the list's sorts, filters and windows.
import type { LightMyRequestResponse } from 'fastify';
import type { Identity } from '@lpm/shared/identity';
import { idsOf, plainIds, type IdsPage } from './list-pages.ts';
import { replicasForSuite, type ServiceUnderTest } from './service-under-test.ts';

export interface SearchGrid {
  searches: readonly string[];
  /** Query strings of a sort, '' for the default one. */
  sorts: readonly string[];
  filters: readonly string[];
  /** Query strings of page and limit. */
  windows: readonly string[];
  /** A sort every window is asked in as well as in the default order. */
  windowSort: string;
}

/** Windows of a list of some hundred records: short pages, a page past the end, and one long page. */
export const SEARCH_WINDOWS = ['page=2&limit=7', 'page=4&limit=5', 'page=30&limit=10', 'limit=50'];

/** Every search (the grid's, or `searches`) with every sort, every filter and every window. */
export function searchQueries(grid: SearchGrid, searches = grid.searches): string[] {
  return searches.flatMap((s) => {
    const search = `search=${encodeURIComponent(s)}`;
    return [
      ...grid.sorts.map((o) => `${search}&${o}`),
      ...grid.filters.map((f) => `${search}&${f}`),
      ...grid.windows.flatMap((w) => [`${search}&${w}`, `${search}&${grid.windowSort}&${w}`]),
    ];
  });
}

/** For every query, the API's page (ids and total) is the plain query's. */
export async function expectPlainPages(
  api: (query: string) => Promise<IdsPage>,
  plain: (query: string) => Promise<IdsPage>,
  queries: string[],
): Promise<void> {
  for (const query of queries) expect({ query, ...(await api(query)) }).toEqual({ query, ...(await plain(query)) });
}

/** Writes through either of two replicas of a service sharing one store. */
export interface ReplicaWrites<A> {
  /** The first replica writes the odd writes, the second the even ones; the other one reads. */
  replicas: [A, A];
  /** Answered 201. */
  create(writer: A, i: number): Promise<LightMyRequestResponse>;
  /** Answered 200. */
  change(writer: A, id: string, i: number): Promise<LightMyRequestResponse>;
  /** Answered 200. */
  remove(writer: A, id: string): Promise<LightMyRequestResponse>;
  /** What the reader is to find at its next search. */
  expectFound(reader: A): Promise<void>;
}

/** Nine writes, a create, a change of ids[i] and a removal of ids[i] in turn, each on one replica and read on the other. */
export async function writeOnEitherReplica<A>(w: ReplicaWrites<A>, ids: string[]): Promise<void> {
  const [first, second] = w.replicas;
  for (let i = 0; i < 9; i++) {
    const [writer, reader] = i % 2 ? [first, second] : [second, first];
    if (i % 3 === 0) expect((await w.create(writer, i)).statusCode).toBe(201);
    else if (i % 3 === 1) expect((await w.change(writer, ids[i], i)).statusCode).toBe(200);
    else expect((await w.remove(writer, ids[i])).statusCode).toBe(200);
    await w.expectFound(reader);
  }
}

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
type SearchedService = ServiceUnderTest & { repository: { search: { held: number } } };

export interface SearchSuiteOptions<S extends SearchedService> {
  /** The records searched, as the tests' names call them ('cases'). */
  noun: string;
  /** The list's path ('/v1/cases'), and the resource's under it. */
  path: string;
  /** The store collection the plain query reads. */
  collection: string;
  /** The team every call is made for. */
  who: Identity;
  start: () => Promise<S>;
  /** A second replica of the service on database `dbName`. */
  startReplica: (dbName: string) => Promise<S>;
  /** Stores the records searched, through the first replica (`call` is its calls as `who`). */
  seed: (
    sut: S,
    call: (method: Method, url: string, payload?: unknown) => Promise<LightMyRequestResponse>,
  ) => Promise<void>;
  /** The plain query's filter and sort for a query string's parameters (page and limit apart). */
  plain: (params: URLSearchParams) => { filter: object; sort: Record<string, 1 | -1> };
  grid: SearchGrid;
  /** The records the search holds once seeded are more than this. */
  heldMoreThan: number;
  replicaWrites: {
    /** What the writes do, as the test's name says it ('creates, renames and deactivates'). */
    named: string;
    /** Searched on the reading replica after each write. */
    queries: string[];
    /** The search whose ids are changed and removed. */
    changing: string;
    create: (i: number) => Record<string, unknown>;
    change: (i: number) => Record<string, unknown>;
    /** The grid's searches asked once more after the writes. */
    searchesAfter: readonly string[];
  };
}

/**
 * Starts the service and a second replica of it on one store, seeded, and tests its
 * search: every query of the grid answered as the plain query answers it, and so after
 * each write made on either replica.
 */
export function searchSuite<S extends SearchedService>(o: SearchSuiteOptions<S>): void {
  let sut: S;
  let replica: S;
  const call = (app: S, method: Method, url: string, payload?: unknown) =>
    app.call(o.who, { method, url, payload: payload as never });
  const api = async (app: S, query: string) => idsOf(await call(app, 'GET', `${o.path}?${query}`));
  const plain = (query: string) => {
    const params = new URLSearchParams(query);
    const { filter, sort } = o.plain(params);
    const page = Number(params.get('page') ?? 1);
    const limit = Number(params.get('limit') ?? 20);
    return plainIds(sut.db, o.collection, filter, sort, (page - 1) * limit, limit);
  };
  const expectPlain = (app: S, queries: string[]) => expectPlainPages((query) => api(app, query), plain, queries);

  replicasForSuite(o.start, o.startReplica, async (started, second) => {
    [sut, replica] = [started, second];
    await o.seed(sut, (method, url, payload) => call(sut, method, url, payload));
  });

  test(`when ${o.noun} are searched with filters, sorts and pages, then each page and total is the plain query page, answered in process`, async () => {
    await expectPlain(sut, searchQueries(o.grid));
    expect(sut.repository.search.held).toBeGreaterThan(o.heldMoreThan);
  }, 240_000);

  const w = o.replicaWrites;
  test(`when another replica ${w.named} ${o.noun}, then each replica finds them as they are at its next search`, async () => {
    await expectPlain(replica, w.queries);
    const ids = (await api(sut, w.changing)).ids;
    await writeOnEitherReplica(
      {
        replicas: [sut, replica],
        create: (writer, i) => call(writer, 'POST', o.path, w.create(i)),
        change: (writer, id, i) => call(writer, 'PUT', `${o.path}/${id}`, w.change(i)),
        remove: (writer, id) => call(writer, 'DELETE', `${o.path}/${id}`),
        expectFound: (reader) => expectPlain(reader, w.queries),
      },
      ids,
    );
    await expectPlain(replica, searchQueries(o.grid, w.searchesAfter));
  }, 240_000);
}
