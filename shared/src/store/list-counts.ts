// How many records of a team each day bucket of a list holds (list-buckets.ts), in
// all and per combination of the counted fields' values (e.g. status and phase), so
// a page knows which buckets to read and its total without counting the team's
// records: FerretDB 1.24 counts in Go over every row a filter matches.
//
// A recount reads a day's records and stores their counts under the document lock of
// its counts document (FerretDB has no atomic update), so recounts run one after
// another. After a write that moves a record between days or changes a counted field,
// the day is counted again; the last recount starts after every write before it, and
// a failed one is repaired by the next write of that day.
//
// A new record is not recounted: it adds a delta document (list-count-deltas.ts), one
// unique insert grouped with the other creates of the moment, with no lock. Counting
// new records under the counts lock cost each create four round trips, one after
// another per team, and took POST /v1/clients from 242 to 92 a second. A record whose
// counted values change within its day (a deal won, a case archived) adds a delta
// too, its values before and after: a recount cost that write five round trips
// before its answer. A page reads
// the counts and the deltas not folded yet; the process that added them folds them
// into the counts document within FOLD_MS, under its lock. A recount stamps `t`, when
// it began to read: a delta of a record stored before that is in its count already.
// A count changed by a delta can drift (a writer that dies between its record and its
// delta, or a recount that saw the record just before its delta landed), so each day
// that took deltas is counted again RECHECK_MS after its last one, RECHECKS_AT_ONCE at
// a time, and at start (ListBuckets.backfill), which also folds the deltas a stopped
// process left.
// Records with no value of the sort field are in a bucket of their own, the day `null`.
//
// A field added to `counted` by a later version is missing from the combinations
// counted before it (and from those an older replica still counts during a rolling
// deploy): a page filtered on it takes the plain query and has those days counted
// again, and the start's pass recounts every such day (ListBuckets.backfill).
import type { Db, Document } from 'mongodb';
import type { Logger } from '../logger.ts';
import { CountDeltas, type CountDelta } from './list-count-deltas.ts';
import type { Day } from './list-day.ts';
import { withDocumentLock } from './lock.ts';
import {
  addDeltas,
  byDay,
  combinations,
  countedWith,
  daysOf,
  type CountsDocument,
  type DayCount,
} from './list-day-counts.ts';
import { ownedBy } from './markers.ts';

export const LIST_COUNTS = 'list_counts';
/** A day that took deltas is counted again about this long (±25%) after its last one. */
const RECHECK_MS = 10_000;
/**
 * Rechecks that run at once in a process; the others wait their turn. Teams that stop
 * writing together come due together, and ten recounts at once held every store
 * connection of the service with their reads for about a second, so every write
 * beside them waited: a repair of drift can wait, a write cannot.
 */
const RECHECKS_AT_ONCE = 2;
/**
 * Deltas are folded into their counts document about this long (±25%) after the first one not
 * folded, or once this process added FOLD_AT of them: a fold costs six round trips,
 * and at one a second per team it cost POST /v1/clients over 40 teams half its rate.
 */
const FOLD_MS = 5_000;
const FOLD_AT = 500;
/** An emptied day's count of 0 is kept this long after its recount, for deltas still on their way. */
const EMPTY_DAY_KEPT_MS = 600_000;
/** Days per counts document: a team's counts are read as one document per this many days. */
const DAYS_PER_DOCUMENT = 32;

export type { Day } from './list-day.ts';

export interface ListCountsOptions {
  db: Db;
  /** The records' collection. */
  collection: string;
  /** The record fields whose values are counted per day (equality filters a page may carry). */
  counted: readonly string[];
  /** The bucket marker of a team's day (list-buckets.ts). */
  marker: (teamId: string, day: Day) => string;
  markerField: string;
  logger?: Logger;
}

/** A day and how many of its records a filter matches. */
export interface DayTotal {
  day: Day;
  n: number;
}

export class ListCounts {
  private readonly opts: ListCountsOptions;
  private readonly recounts = new Map<string, { running: Promise<void>; queued: Promise<void> | null }>();
  private readonly deltas: CountDeltas;
  /** Folds due, by counts document, and the deltas this process added since. */
  private readonly folds = new Map<string, { timer: NodeJS.Timeout; added: number }>();
  /** Recounts due after deltas, by `<team>:<day>`. */
  private readonly rechecks = new Map<string, NodeJS.Timeout>();
  /** Rechecks come due and not begun (`<team>:<day>`, in turn), and how many run. */
  private readonly rechecksDue = new Map<string, [string, Day]>();
  private rechecksRunning = 0;

  constructor(opts: ListCountsOptions) {
    this.opts = opts;
    this.deltas = new CountDeltas(opts.db);
  }

  private get documents() {
    return this.opts.db.collection<CountsDocument>(LIST_COUNTS);
  }

  private owner(teamId: string): string {
    return `${this.opts.collection}:${teamId}`;
  }

  async createIndexes(): Promise<void> {
    await this.documents.createIndex({ owner: 1 });
    await this.deltas.createIndexes();
  }

  /** Every [team, day] of this collection with a stored count. */
  async countedDays(): Promise<[string, Day][]> {
    const prefix = `${this.opts.collection}:`;
    const docs = (await this.documents.find({}).toArray()).filter((doc) => doc.owner.startsWith(prefix));
    return docs.flatMap((doc) => daysOf(doc).map((d): [string, Day] => [doc.owner.slice(prefix.length), d.d]));
  }

  /** Every [team, day] of this collection that took a delta and is not counted again yet, or was counted without a field counted now. */
  async owedRechecks(): Promise<[string, Day][]> {
    const prefix = `${this.opts.collection}:`;
    const docs = (await this.documents.find({}).toArray()).filter((doc) => doc.owner.startsWith(prefix));
    return docs.flatMap((doc) =>
      daysOf(doc)
        .filter((d) => d.r || !countedWith(d, this.opts.counted))
        .map((d): [string, Day] => [doc.owner.slice(prefix.length), d.d]),
    );
  }

  /**
   * The team's days holding records that match `equal` (counted fields only), oldest
   * first, the day `null` last; null when a day was counted without one of `equal`'s
   * fields (a field counted since): those days are counted again meanwhile.
   */
  async days(teamId: string, equal: Record<string, unknown>): Promise<DayTotal[] | null> {
    const owner = this.owner(teamId);
    // Deltas first: a fold writes the counts document before it deletes the deltas it
    // counted, so a delta gone from this read is in the document read after it.
    const deltas = await this.deltas.ofOwner(owner);
    const docs = await this.documents.find({ owner }).toArray();
    const fields = Object.entries(equal);
    const names = Object.keys(equal);
    const counts: DayCount[] = [];
    for (const doc of docs) {
      const ofDoc = daysOf(doc);
      addDeltas(
        ofDoc,
        deltas.filter((d) => d.doc === doc._id),
        new Set(doc.absorbed),
        this.opts.counted,
      );
      counts.push(...ofDoc);
    }
    // Deltas of a counts document not written yet: the team's first records of those days.
    const stored = new Set(docs.map((doc) => doc._id));
    addDeltas(
      counts,
      deltas.filter((d) => !stored.has(d.doc)),
      new Set(),
      this.opts.counted,
    );
    const uncounted = counts.filter((day) => !countedWith(day, names));
    if (uncounted.length > 0) {
      for (const day of uncounted) void this.recount(teamId, day.d);
      return null;
    }
    const days: DayTotal[] = [];
    for (const day of counts) {
      const n =
        fields.length === 0
          ? day.n
          : day.by.filter((c) => fields.every(([f, v]) => c.v[f] === v)).reduce((sum, c) => sum + c.n, 0);
      if (n > 0) days.push({ day: day.d, n });
    }
    return days.sort((a, b) => byDay(a.day, b.day));
  }

  /**
   * Counts the team's day again; resolves once a recount that started after this call
   * is stored. Failures are logged, not thrown: the write before it has happened, and
   * the next write of that day counts it again.
   */
  async recount(teamId: string, day: Day): Promise<void> {
    try {
      await this.coalesced(teamId, day);
    } catch (err) {
      this.opts.logger?.warn(
        { err, collection: this.opts.collection, team_id: teamId, day },
        'list counts of a day not recounted; its next write recounts them',
      );
    }
  }

  /**
   * Counts the team's `days` again, for writes that moved records between them and
   * left their recounts to the caller (RecordStore.updateReads): the days of one counts
   * document one after another (they share its lock), the documents at once. Rejects
   * when one failed; the caller counts them again later.
   */
  async recountDays(teamId: string, days: Day[]): Promise<void> {
    const byDocument = new Map<string, Day[]>();
    for (const day of new Set(days)) {
      const id = this.documentId(teamId, day);
      byDocument.set(id, [...(byDocument.get(id) ?? []), day]);
    }
    await Promise.all(
      [...byDocument.values()].map(async (ofDocument) => {
        for (const day of ofDocument) await this.coalesced(teamId, day);
      }),
    );
  }

  private coalesced(teamId: string, day: Day): Promise<void> {
    const key = `${teamId}:${day}`;
    const entry = this.recounts.get(key);
    if (entry?.queued) return entry.queued;
    const run: Promise<void> = (entry?.running.catch(() => {}) ?? Promise.resolve())
      .then(() => {
        const current = this.recounts.get(key)!;
        current.running = run;
        // The first recount starts at once: another may have queued behind it already.
        if (current.queued === run) current.queued = null;
        return this.recountNow(teamId, day);
      })
      .finally(() => {
        const current = this.recounts.get(key);
        if (current?.running === run && !current.queued) this.recounts.delete(key);
      });
    if (entry) entry.queued = run;
    else this.recounts.set(key, { running: run, queued: null });
    return run;
  }

  /** The counted fields' values of a record. */
  valuesOf(record: Document): Record<string, unknown> {
    return Object.fromEntries(this.opts.counted.map((f) => [f, record[f] ?? null]));
  }

  /**
   * Counts a new record of the team in its day, stored at `storedAt` (ms, when the
   * store acknowledged it): resolves once its delta is stored, so a page read after it
   * counts the record. Failures are logged: the recount that follows repairs the day.
   */
  added(teamId: string, day: Day, record: Document, storedAt: number): Promise<void> {
    return this.addDelta(teamId, day, {
      _id: `${this.opts.collection}:${record._id}`,
      v: this.valuesOf(record),
      at: storedAt,
    });
  }

  /**
   * Counts a record of the team whose counted values changed within its day from
   * `from` to `to`, by the write that made it `version` (stored at `storedAt`): as
   * `added`, one delta instead of a recount.
   */
  moved(
    teamId: string,
    day: Day,
    id: string,
    version: number,
    from: Record<string, unknown>,
    to: Record<string, unknown>,
    storedAt: number,
  ): Promise<void> {
    return this.addDelta(teamId, day, { _id: `${this.opts.collection}:${id}:${version}`, v: to, from, at: storedAt });
  }

  private async addDelta(
    teamId: string,
    day: Day,
    delta: Pick<CountDelta, '_id' | 'v' | 'from' | 'at'>,
  ): Promise<void> {
    const doc = this.documentId(teamId, day);
    try {
      await this.deltas.add({ ...delta, owner: this.owner(teamId), doc, d: day });
      this.foldLater(teamId, doc);
    } catch (err) {
      this.opts.logger?.warn(
        { err, collection: this.opts.collection, team_id: teamId, day },
        'list count delta not stored; a recount follows',
      );
    }
    this.recheckLater(teamId, day);
  }

  private foldLater(teamId: string, doc: string): void {
    const due = this.folds.get(doc);
    if (due && ++due.added < FOLD_AT) return;
    clearTimeout(due?.timer);
    const foldNow = () => {
      this.folds.delete(doc);
      this.fold(teamId, doc).catch((err: unknown) =>
        this.opts.logger?.warn(
          { err, collection: this.opts.collection, team_id: teamId },
          'list count deltas not folded; pages still count them, the next fold takes them',
        ),
      );
    };
    if (due) return foldNow();
    // Spread: teams that began writing together would otherwise fold together, every FOLD_MS.
    const timer = setTimeout(foldNow, FOLD_MS * (0.75 + Math.random() / 2));
    timer.unref();
    this.folds.set(doc, { timer, added: 1 });
  }

  /** Adds the deltas of one counts document to it and deletes them, under its lock. */
  async fold(teamId: string, doc: string): Promise<void> {
    await withDocumentLock(this.opts.db, LIST_COUNTS, doc, async () => {
      const current = await this.documents.findOne({ _id: doc });
      const deltas = await this.deltas.ofDocument(doc);
      if (deltas.length === 0) return;
      // Emptied days are kept a while (recountNow), then dropped here.
      const days = daysOf(current).filter((d) => d.n > 0 || (d.t ?? 0) > Date.now() - EMPTY_DAY_KEPT_MS);
      addDeltas(days, deltas, new Set(current?.absorbed), this.opts.counted, true);
      days.sort((a, b) => byDay(a.d, b.d));
      const absorbed = deltas.map((d) => d._id);
      await this.documents.updateOne(
        { _id: doc },
        { $set: { owner: this.owner(teamId), days: JSON.stringify(days), absorbed } },
        { upsert: true },
      );
      await this.deltas.remove(doc, absorbed);
    });
  }

  /** Every [team, counts document] with deltas not folded (a process stopped before it folded them). */
  async unfolded(): Promise<[string, string][]> {
    const prefix = `${this.opts.collection}:`;
    const docs = new Map<string, string>();
    for (const d of await this.deltas.withPrefix(prefix)) docs.set(d.doc, d.owner.slice(prefix.length));
    return [...docs].map(([doc, teamId]) => [teamId, doc]);
  }

  private recheckLater(teamId: string, day: Day): void {
    const key = `${teamId}:${day}`;
    clearTimeout(this.rechecks.get(key));
    const timer = setTimeout(
      () => {
        this.rechecks.delete(key);
        this.rechecksDue.set(key, [teamId, day]);
        this.startRechecks();
      },
      RECHECK_MS * (0.75 + Math.random() / 2),
    );
    timer.unref();
    this.rechecks.set(key, timer);
  }

  /** Begins the rechecks due, oldest first, while fewer than RECHECKS_AT_ONCE run. */
  private startRechecks(): void {
    for (const [key, [teamId, day]] of this.rechecksDue) {
      if (this.rechecksRunning >= RECHECKS_AT_ONCE) return;
      this.rechecksDue.delete(key);
      this.rechecksRunning++;
      void this.recount(teamId, day).finally(() => {
        this.rechecksRunning--;
        this.startRechecks();
      });
    }
  }

  private documentId(teamId: string, day: Day): string {
    return `${this.owner(teamId)}:${day === null ? 'none' : Math.floor(day / DAYS_PER_DOCUMENT)}`;
  }

  /** Counts the day's records and stores the result, all under the counts document's lock. */
  async recountNow(teamId: string, day: Day): Promise<void> {
    const { db, collection, counted, marker, markerField } = this.opts;
    const id = this.documentId(teamId, day);
    await withDocumentLock(db, LIST_COUNTS, id, async () => {
      const projection = Object.fromEntries(counted.map((f) => [f, 1]));
      const t = Date.now();
      const records = await db
        .collection(collection)
        .find({ [markerField]: marker(teamId, day), ...ownedBy('team_id', teamId) }, { projection })
        .toArray();
      const doc = await this.documents.findOne({ _id: id });
      const days = daysOf(doc).filter((d) => d.d !== day);
      // An emptied day stays, counted 0, so that deltas of records stored before `t` stay out of it.
      days.push({ d: day, n: records.length, by: combinations(records, counted), t });
      days.sort((a, b) => byDay(a.d, b.d));
      await this.documents.updateOne(
        { _id: id },
        { $set: { owner: this.owner(teamId), days: JSON.stringify(days) } },
        { upsert: true },
      );
    });
  }
}
