// Records stored straight into a service's collection with their list markers, and
// their days counted as the service's writes count them (store/list-buckets.ts): how
// the bench seeds every list that the services read by day buckets.
import type { Db, Document } from 'mongodb';
import type { ListBuckets } from './internals.ts';

export interface Seeded {
  /** Seconds the inserts took. */
  seconds: number;
  /** Seconds the days' counts took. */
  countSeconds: number;
  days: number;
}

/** How long the service's backfill (at its start) may take to mark its lists ready on a new database. */
const BACKFILL_PATIENCE_MS = 60_000;

/**
 * Waits for the service's backfill to mark the collection's list ready (so the pages
 * measured are read by day buckets), then inserts `n` records made by `make` (batches
 * of 1,000) with their markers, then counts each of their days; `each` sees every record.
 */
export async function seedListed<R extends Document & { team_id: string }>(
  db: Db,
  collection: string,
  lists: ListBuckets,
  n: number,
  make: (i: number) => R,
  each: (record: R) => void = () => {},
): Promise<Seeded> {
  for (const since = Date.now(); !(await lists.ready());) {
    if (Date.now() - since > BACKFILL_PATIENCE_MS)
      throw new Error(`the service did not mark its ${collection} list ready within ${BACKFILL_PATIENCE_MS / 1000} s`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const col = db.collection(collection);
  const days = new Map<string, [string, ReturnType<ListBuckets['bucketDay']>]>();
  const started = Date.now();
  for (let from = 0; from < n; from += 1000) {
    const batch = Array.from({ length: Math.min(1000, n - from) }, (_, k) => make(from + k));
    await col.insertMany(
      batch.map((r) => ({ ...r, ...lists.markerOf(r) })),
      { ordered: false },
    );
    for (const r of batch) {
      each(r);
      const day = lists.bucketDay(r);
      days.set(`${r.team_id}:${day}`, [r.team_id, day]);
    }
  }
  const seconds = (Date.now() - started) / 1000;
  const counting = Date.now();
  for (const [teamId, day] of days.values()) await lists.counts.recountNow(teamId, day);
  return { seconds, countSeconds: (Date.now() - counting) / 1000, days: days.size };
}
