// The default page of a big list, newest (or oldest) first, by equality markers.
// FerretDB 1.24 sorts, skips and counts in Go over every row the pushed equality
// matched (docs/ferretdb.md), so a page of a team with 100,000 records read all of
// them, twice (find and count). Each record therefore carries `list_bucket`,
// `<team>:<day of its creation instant>`, written with the record and never changed
// (the instant does not change). A page reads the team's day counts (list-counts.ts),
// skips whole days by their counts, and asks only the days the page falls in, each by
// equality on its marker (an index lookup on the local store's GIN index), sorted by
// the instant and `_id` as the plain query sorts. Equality filters on counted fields
// (a case's status and phase) are served the same way, from the counts per value.
// The same code runs on MongoDB.
//
// Records written before the marker existed get it from `backfill`, run once per
// collection at start (and again after its cursor document is deleted); until it has
// finished, pages take the plain query.
import type { Db, Document, Filter } from 'mongodb';
import type { SortSpec } from '../http/pagination.ts';
import type { Logger } from '../logger.ts';
import { DAY_MS } from '../time.ts';
import { ListCounts, type DayTotal } from './list-counts.ts';
import { withDocumentLock } from './lock.ts';
import { advanceCursor, bucketOf, readCursor } from './markers.ts';
import { SWEEP, SWEEP_CURSOR } from './time-budgets.ts';

export const LIST_BUCKET_FIELD = 'list_bucket';

const dayMarker = (teamId: string, day: number): string => `${teamId}:${day}`;
/** A record's list marker: its team and the UTC day of its creation instant. */
export const listBucket = (teamId: string, at: Date | number): string => dayMarker(teamId, bucketOf(at, DAY_MS));

export interface ListBucketsOptions {
  db: Db;
  collection: string;
  /** The creation instant the list sorts by; it must never change after insert. */
  timeField: string;
  /** Fields a page may filter on by equality, counted per day (e.g. status, phase). */
  counted: readonly string[];
  logger?: Logger;
}

export interface BucketPage<R> {
  records: R[];
  total: number;
}

export interface BucketPageQuery {
  teamId: string;
  /** Equalities on counted fields only. */
  equal: Record<string, unknown>;
  direction: 1 | -1;
  skip: number;
  limit: number;
  projection: Document;
}

export class ListBuckets {
  private readonly opts: ListBucketsOptions;
  readonly counts: ListCounts;
  /** Set once the backfill is known to be done (it never comes undone in a process). */
  private backfilled = false;

  constructor(opts: ListBucketsOptions) {
    this.opts = opts;
    this.counts = new ListCounts({
      db: opts.db,
      collection: opts.collection,
      counted: opts.counted,
      marker: dayMarker,
      markerField: LIST_BUCKET_FIELD,
      logger: opts.logger,
    });
  }

  private get cursorKey(): string {
    return `list-buckets:${this.opts.collection}`;
  }

  /** The marker field to store with a new record. */
  markerOf(record: Document): Record<string, string> {
    return { [LIST_BUCKET_FIELD]: listBucket(record.team_id, record[this.opts.timeField]) };
  }

  /** After a write that added `record` or changed one of its counted fields. */
  recount(record: Document): Promise<void> {
    return this.counts.recount(record.team_id, bucketOf(record[this.opts.timeField], DAY_MS));
  }

  /** Whether a write of `set` can change the day counts (it sets a counted field). */
  changesCounts(set: Document): boolean {
    return this.opts.counted.some((f) => f in set);
  }

  /**
   * A list's page by day buckets when it is asked in the order of the time field with
   * no filter but equalities on counted fields (`filters`: every filter of the list,
   * undefined when not asked); null otherwise (take the plain query).
   */
  listPage<R>(teamId: string, filters: object, sort: SortSpec, window: { skip: number; limit: number }, projection: Document): Promise<BucketPage<R> | null> {
    const given = Object.entries(filters).filter(([, v]) => v !== undefined);
    if (sort.field !== this.opts.timeField || given.some(([k]) => !this.opts.counted.includes(k))) return Promise.resolve(null);
    return this.page<R>({ teamId, equal: Object.fromEntries(given), direction: sort.direction, ...window, projection });
  }

  /** The page, or null while records written before the markers may still lack them (take the plain query). */
  async page<R>(q: BucketPageQuery): Promise<BucketPage<R> | null> {
    if (!(await this.ready())) return null;
    const days = await this.counts.days(q.teamId, q.equal);
    if (q.direction === -1) days.reverse();
    const total = days.reduce((sum, d) => sum + d.n, 0);
    return { records: await this.read<R>(q, days), total };
  }

  /**
   * Skips whole days by their counts, then reads day after day until the page is
   * full. A count a concurrent write made stale only moves the page's edge: a day that
   * holds fewer records than counted lets the next day fill the page.
   */
  private async read<R>(q: BucketPageQuery, days: DayTotal[]): Promise<R[]> {
    let i = 0;
    let offset = q.skip;
    while (i < days.length && offset >= days[i].n) offset -= days[i++].n;
    const records: R[] = [];
    const sort = { [this.opts.timeField]: q.direction, _id: q.direction };
    const col = this.opts.db.collection(this.opts.collection);
    for (; i < days.length && records.length < q.limit; i++, offset = 0) {
      const filter = { [LIST_BUCKET_FIELD]: dayMarker(q.teamId, days[i].day), ...q.equal } as Filter<Document>;
      records.push(...((await col.find(filter, { projection: q.projection, sort, skip: offset, limit: q.limit - records.length }).toArray()) as R[]));
    }
    return records;
  }

  private async ready(): Promise<boolean> {
    if (!this.backfilled) this.backfilled = (await readCursor(this.opts.db, this.cursorKey)) !== null;
    return this.backfilled;
  }

  async createIndexes(): Promise<void> {
    await this.opts.db.collection(this.opts.collection).createIndex({ [LIST_BUCKET_FIELD]: 1, [this.opts.timeField]: 1, _id: 1 }, SWEEP);
    await this.counts.createIndexes();
  }

  /**
   * Gives every record without a marker its marker (under the record's document
   * lock: the record store writes under it too), then counts every day of every team
   * again, then records that it is done. Safe to run from several replicas at once and
   * to repeat. A no-op once done: the first run reads the whole collection.
   */
  async backfill(stopping: () => boolean = () => false): Promise<void> {
    if (await this.ready()) return;
    const { db, collection, timeField } = this.opts;
    await this.createIndexes();
    const col = db.collection(collection);
    const unmarked = { [LIST_BUCKET_FIELD]: { $exists: false } };
    for (const r of await col.find(unmarked, { projection: { _id: 1 }, ...SWEEP }).toArray()) {
      if (stopping()) return;
      await withDocumentLock(db, collection, r._id, async () => {
        const fresh = await col.findOne({ _id: r._id, ...unmarked }, { projection: { team_id: 1, [timeField]: 1 } });
        if (fresh) await col.updateOne({ _id: r._id }, { $set: this.markerOf(fresh) });
      });
    }
    // Days counted before (a repeated backfill) are counted again too: one may be empty now.
    const days = new Map((await this.counts.countedDays()).map(([teamId, day]) => [dayMarker(teamId, day), [teamId, day] as const]));
    for await (const r of col.find({}, { projection: { team_id: 1, [timeField]: 1 }, ...SWEEP_CURSOR })) {
      const day = bucketOf(r[timeField], DAY_MS);
      days.set(dayMarker(r.team_id, day), [r.team_id, day]);
    }
    for (const [teamId, day] of days.values()) {
      if (stopping()) return;
      await this.counts.recountNow(teamId, day);
    }
    await advanceCursor(db, this.cursorKey, 1);
    this.backfilled = true;
    this.opts.logger?.info({ collection, days: days.size }, 'list markers and day counts written');
  }
}

/**
 * The backfills as a background task of a service: started at once, not awaited (the
 * first one over a big collection takes minutes), tried again after `retryMs` when
 * it fails; stop waits for the run in flight, which stops between records.
 */
export function listBackfillTask(lists: ListBuckets[], logger: Logger, retryMs: number) {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const run = async (): Promise<void> => {
    try {
      for (const list of lists) await list.backfill(() => stopped);
    } catch (err) {
      logger.error({ err }, 'list markers backfill failed; retried later');
      if (!stopped) timer = setTimeout(() => (running = run()), retryMs);
    }
  };
  return {
    start: async () => {
      running = run();
    },
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
