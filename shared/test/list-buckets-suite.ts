// Records of teams spread over days on a scratch database, their lists by day buckets
// and the plain query's pages, for the files of list-buckets*.test.ts. Bindings are
// exported live: the suite sets them.
import type { Db } from 'mongodb';
import { ListBuckets } from '../src/store/list-buckets.ts';
import { DAY_MS } from '../src/time.ts';
import { scratchDatabase } from '@lpm/test-kit/scratch-database';

export let db: Db;

export interface Rec {
  _id: string;
  team_id: string;
  at: Date;
  status: string;
  phase: string;
  list_bucket?: string;
}

export const DAY0 = Date.parse('2026-03-01T00:00:00Z');
export const lists = (collection: string) =>
  new ListBuckets({
    db,
    collection,
    order: { field: 'at', keys: ['at'] },
    dayField: 'at',
    counted: ['status', 'phase'],
  });

/**
 * Records of `team` over five days, some at the very same instant (ties broken by
 * _id), some at the edges of a day, with status and phase spread.
 */
export function spread(team: string, n: number): Rec[] {
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
export async function insertMarked(buckets: ListBuckets, collection: string, records: Rec[]): Promise<void> {
  await db.collection<Rec>(collection).insertMany(records.map((r) => ({ ...r, ...buckets.markerOf(r) })));
  const days = new Map(records.map((r) => [`${r.team_id}:${Math.floor(+r.at / DAY_MS)}`, r]));
  for (const r of days.values()) await buckets.recount(r);
}

/** The page the plain query gives: every match sorted by the instant, then _id. */
export async function plainPage(collection: string, filter: object, direction: 1 | -1, skip: number, limit: number) {
  const col = db.collection<Rec>(collection);
  const [records, total] = await Promise.all([
    col
      .find(filter, { projection: { list_bucket: 0 }, sort: { at: direction, _id: direction }, skip, limit })
      .toArray(),
    col.countDocuments(filter),
  ]);
  return { records, total };
}

export const page = (
  buckets: ListBuckets,
  teamId: string,
  equal: Record<string, unknown>,
  direction: 1 | -1,
  skip: number,
  limit: number,
) => buckets.page<Rec>({ teamId, equal, direction, skip, limit, projection: { list_bucket: 0 } });

/** A scratch database `name` for the file's records and counts. */
export function listBucketsSuite(name: string): void {
  scratchDatabase(name, (opened) => (db = opened));
}
