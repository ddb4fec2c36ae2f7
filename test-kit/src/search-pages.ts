// A list's search answered in process, compared with the plain query's page for the
// same query string: every search crossed with the list's sorts, filters and windows.
import type { LightMyRequestResponse } from 'fastify';
import type { IdsPage } from './list-pages.ts';

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
