// The default page of a big list, in its sort order, by equality markers. FerretDB
// 1.24 sorts, skips and counts in Go over every row the pushed equality matched
// (docs/ferretdb.md), so a page of a team with 100,000 records read all of them,
// twice (find and count). Each record therefore carries `list_bucket`,
// `<team>:<UTC day of its sort value>` (`<team>:none` without one), written with the
// record and moved with it when a write changes its sort value. A page reads the
// team's day counts (list-counts.ts), skips whole days by their counts, and asks only
// the days the page falls in, each by equality on its marker (an index lookup on the
// local store's GIN index), sorted as the plain query sorts. Equality filters on
// counted fields (a case's status and phase) are served the same way, from the
// counts per value, and so is a range of whole days where the sort value is a day
// (a financial record's date). The same code runs on MongoDB.
//
// Records written before the marker existed get it from `backfill`, run once per
// collection at start (and again after its cursor document is deleted); until it has
// finished, pages take the plain query.
import type { Db, Document, Filter } from 'mongodb';
import { storeSort, type SortSpec } from '../http/pagination.ts';
import { readBucketPage } from './bucket-pages.ts';
import type { Logger } from '../logger.ts';
import { DAY_MS } from '../time.ts';
import { ListCounts, type Day, type DayTotal } from './list-counts.ts';
import { withDocumentLock } from './lock.ts';
import { advanceCursor, bucketOf, ownedBy, readCursor } from './markers.ts';
import { SWEEP, SWEEP_CURSOR } from './time-budgets.ts';

export const LIST_BUCKET_FIELD = 'list_bucket';

const dayMarker = (teamId: string, day: Day): string => `${teamId}:${day ?? 'none'}`;

/** The UTC day of a sort value: an instant, or a YYYY-MM-DD day; null for no value. */
export function dayOf(value: DayValue): Day {
  if (value === null || value === undefined) return null;
  return bucketOf(typeof value === 'string' ? Date.parse(`${value}T00:00:00Z`) : value, DAY_MS);
}

/** The stored values a record's day comes from (dayOf). */
type DayValue = Date | number | string | null | undefined;

/** The team of a listed record (records are untyped documents here). */
const teamOf = (record: Document): string => record.team_id as string;

/** A record's list marker: its team and the UTC day of its sort value. */
export const listBucket = (teamId: string, value: Date | number | string | null): string =>
  dayMarker(teamId, dayOf(value));

export interface ListBucketsOptions {
  db: Db;
  collection: string;
  /**
   * The list's default order: the sort parameter's field and the stored keys that
   * order it (as `sortOrder` takes them: every key but the last ascends, `_id` breaks
   * ties). Its days must follow that order: the last key is `dayField`, and a leading
   * key puts the records without a value last in either direction, as the bucket
   * `<team>:none` is read after every day.
   */
  order: { field: string; keys: readonly string[] };
  /** The stored field (an instant or a YYYY-MM-DD day) whose UTC day is a record's bucket; a write may change it. */
  dayField: string;
  /** Fields a page may filter on by equality, counted per day (e.g. status, phase). */
  counted: readonly string[];
  logger?: Logger;
}

/** The order of the lists sorted by creation instant by default (cases, deals, clients): the instant never changes. */
export const BY_CREATION = { order: { field: 'created_at', keys: ['created_at'] }, dayField: 'created_at' } as const;

export interface BucketPage<R> {
  records: R[];
  total: number;
}

/** Whole days, inclusive: a range on the day field that days answer exactly (a YYYY-MM-DD field's). */
export interface DayRange {
  from?: number;
  to?: number;
}

export interface BucketPageQuery {
  teamId: string;
  /** Equalities on counted fields only. */
  equal: Record<string, unknown>;
  /** Only the records whose day is in the range (none without a value). */
  days?: DayRange;
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

  /** The day whose bucket holds `record`. */
  bucketDay(record: Document): Day {
    return dayOf(record[this.opts.dayField] as DayValue);
  }

  /** The marker field to store with a new record. */
  markerOf(record: Document): Record<string, string> {
    return { [LIST_BUCKET_FIELD]: dayMarker(teamOf(record), this.bucketDay(record)) };
  }

  /** The marker to write with an update of `set`: the record's new one when `set` has its sort value, else none. */
  markerOfUpdate(current: Document, set: Document): Record<string, string> {
    return this.opts.dayField in set ? this.markerOf({ ...current, ...set }) : {};
  }

  /** Counts the day of `record` again (a record removed, a day a write left or joined). */
  recount(record: Document): Promise<void> {
    return this.counts.recount(teamOf(record), this.bucketDay(record));
  }

  /** Counts a new record in its day; `storedAt`: when the store acknowledged it (ms). */
  added(record: Document, storedAt: number): Promise<void> {
    return this.counts.added(teamOf(record), this.bucketDay(record), record, storedAt);
  }

  /** The days a write of `set` over `current` moves the record between (the one it leaves, the one it joins); none when it stays in its day. */
  movedDays(current: Document, set: Document): Day[] {
    const from = this.bucketDay(current);
    const to = this.bucketDay({ ...current, ...set });
    return from === to ? [] : [from, to];
  }

  /** Counts the team's `days` again (ListCounts.recountDays); rejects when one failed. */
  recountDays(teamId: string, days: Day[]): Promise<void> {
    return this.counts.recountDays(teamId, days);
  }

  /**
   * Brings the day counts up to a write of `set` over `current`, acknowledged at
   * `storedAt` (ms): a record moved to another day has the day it left and the day
   * it joined counted again; one whose counted values changed within its day adds a
   * delta (list-counts.ts), one insert grouped with others; any other write changes
   * no count. Resolves once a page counts the write.
   */
  async written(current: Document, set: Document, storedAt: number): Promise<void> {
    const next = { ...current, ...set };
    const day = this.bucketDay(current);
    if (this.bucketDay(next) !== day) {
      for (const r of [current, next]) await this.recount(r);
      return;
    }
    const from = this.counts.valuesOf(current);
    const to = this.counts.valuesOf(next);
    if (this.opts.counted.every((f) => from[f] === to[f])) return;
    await this.counts.moved(
      teamOf(current),
      day,
      current._id as string,
      (current.version as number) + 1,
      from,
      to,
      storedAt,
    );
  }

  /**
   * A list's page by day buckets when it is asked in the default order with no filter
   * but equalities on counted fields (`filters`: every filter of the list; one
   * undefined or empty filters nothing, as in the plain queries) and a range of whole
   * days; null otherwise (take the plain query).
   */
  listPage<R>(
    teamId: string,
    filters: object,
    sort: SortSpec,
    window: { skip: number; limit: number },
    projection: Document,
    days?: DayRange,
  ): Promise<BucketPage<R> | null> {
    const given = Object.entries(filters).filter(([, v]) => v !== undefined && v !== null && v !== '');
    if (sort.field !== this.opts.order.field || given.some(([k]) => !this.opts.counted.includes(k)))
      return Promise.resolve(null);
    return this.page<R>({
      teamId,
      equal: Object.fromEntries(given),
      days,
      direction: sort.direction,
      ...window,
      projection,
    });
  }

  /**
   * The page, or null (take the plain query) while records written before the markers
   * may still lack them, or while days counted before a filtered field was counted
   * are counted again (list-counts.ts).
   */
  async page<R>(q: BucketPageQuery): Promise<BucketPage<R> | null> {
    if (!(await this.ready())) return null;
    const { from = -Infinity, to = Infinity } = q.days ?? {};
    const all = await this.counts.days(q.teamId, q.equal);
    if (!all) return null;
    const counted = all.filter((d) => !q.days || (d.day !== null && d.day >= from && d.day <= to));
    // Newest first: the records without a value still last.
    const days =
      q.direction === 1
        ? counted
        : [...counted.filter((d) => d.day !== null).reverse(), ...counted.filter((d) => d.day === null)];
    const total = days.reduce((sum, d) => sum + d.n, 0);
    return { records: await this.read<R>(q, days), total };
  }

  /** The page's records, day after day (bucket-pages.ts). */
  private read<R>(q: BucketPageQuery, days: DayTotal[]): Promise<R[]> {
    const sort = storeSort(this.opts.order.keys, q.direction);
    const col = this.opts.db.collection(this.opts.collection);
    return readBucketPage(
      days,
      (d) => d.n,
      q,
      async (d, skip, limit) => {
        const filter = {
          [LIST_BUCKET_FIELD]: dayMarker(q.teamId, d.day),
          ...ownedBy('team_id', q.teamId),
          ...q.equal,
        } as Filter<Document>;
        return (await col.find(filter, { projection: q.projection, sort, skip, limit }).toArray()) as R[];
      },
    );
  }

  /** Whether the backfill has marked the list ready (pages are read by day buckets). */
  async ready(): Promise<boolean> {
    if (!this.backfilled) this.backfilled = (await readCursor(this.opts.db, this.cursorKey)) !== null;
    return this.backfilled;
  }

  async createIndexes(): Promise<void> {
    const keys = Object.fromEntries(this.opts.order.keys.map((k) => [k, 1]));
    await this.opts.db.collection(this.opts.collection).createIndex({ [LIST_BUCKET_FIELD]: 1, ...keys, _id: 1 }, SWEEP);
    await this.counts.createIndexes();
  }

  /**
   * Gives every record without a marker its marker (under the record's document
   * lock: the record store writes under it too), then counts every day of every team
   * again, then records that it is done. Safe to run from several replicas at once and
   * to repeat. A no-op once done: the first run reads the whole collection.
   */
  async backfill(stopping: () => boolean = () => false): Promise<void> {
    // Deltas a stopped process added and did not fold.
    for (const [teamId, doc] of await this.counts.unfolded()) {
      if (stopping()) return;
      await this.counts.fold(teamId, doc);
    }
    if (await this.ready()) {
      // Days whose new records a process counted by delta and that were not counted again
      // before it stopped, and days counted before a field this version counts.
      for (const [teamId, day] of await this.counts.owedRechecks()) {
        if (stopping()) return;
        await this.counts.recountNow(teamId, day);
      }
      return;
    }
    const { db, collection, dayField } = this.opts;
    await this.createIndexes();
    const col = db.collection(collection);
    const unmarked = { [LIST_BUCKET_FIELD]: { $exists: false } };
    for (const r of await col.find(unmarked, { projection: { _id: 1 }, ...SWEEP }).toArray()) {
      if (stopping()) return;
      await withDocumentLock(db, collection, r._id, async () => {
        const fresh = await col.findOne({ _id: r._id, ...unmarked }, { projection: { team_id: 1, [dayField]: 1 } });
        if (fresh) await col.updateOne({ _id: r._id }, { $set: this.markerOf(fresh) });
      });
    }
    // Days counted before (a repeated backfill) are counted again too: one may be empty now.
    const days = new Map(
      (await this.counts.countedDays()).map(([teamId, day]) => [dayMarker(teamId, day), [teamId, day] as const]),
    );
    for await (const r of col.find({}, { projection: { team_id: 1, [dayField]: 1 }, ...SWEEP_CURSOR })) {
      const day = this.bucketDay(r);
      const teamId = teamOf(r);
      days.set(dayMarker(teamId, day), [teamId, day]);
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
      if (!stopped) {
        timer = setTimeout(() => {
          running = run();
        }, retryMs);
      }
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
