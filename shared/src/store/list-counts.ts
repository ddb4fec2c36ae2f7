// How many records of a team each day bucket of a list holds (list-buckets.ts), in
// all and per combination of the counted fields' values (e.g. status and phase), so
// a page knows which buckets to read and its total without counting the team's
// records: FerretDB 1.24 counts in Go over every row a filter matches.
//
// Every change of a count is made under the document lock of its counts document
// (FerretDB has no atomic update), so they run one after another. After a write that
// moves a record between days or changes a counted field, the day is counted again
// from its records (an equality read of one bucket); the last recount starts after
// every write before it, and a failed one is repaired by the next write of that day.
// A new record only adds one to its day: a recount reads the whole day, which made
// each create cost a read of every record created that day (a day of 2,000 clients
// took POST /v1/clients from 0.3 to 16 s at 100 writes/s). A count changed by a delta
// can drift (a writer that dies between its record and its count, or a recount that
// saw the record before its delta landed), so each day that took deltas is counted
// again RECHECK_MS after its last one, and at start (ListBuckets.backfill). Callers
// arriving while a change of one document runs share the single change queued after
// it. Records with no value of the list's sort field are in a bucket of their own,
// the day `null`.
import type { Db, Document } from 'mongodb';
import type { Logger } from '../logger.ts';
import { withDocumentLock } from './lock.ts';

export const LIST_COUNTS = 'list_counts';
/** A day that took deltas is counted again this long after its last one. */
const RECHECK_MS = 10_000;
/** Days per counts document: a team's counts are read as one document per this many days. */
const DAYS_PER_DOCUMENT = 32;

/** A UTC day number, or null for the records with no value of the sort field. */
export type Day = number | null;

/** The records of one day with the same counted values. */
interface Combination {
  v: Record<string, unknown>;
  n: number;
}

interface DayCount {
  d: Day;
  n: number;
  by: Combination[];
  /** Took a delta since its last recount: counted again later, or at the next start if this process dies first. */
  r?: true;
  /** When the last recount began to read the day (ms): a record stored before that is in its count already. */
  t?: number;
}

interface CountsDocument {
  _id: string;
  /** `<collection>:<team>`: a team's documents are read by this equality. */
  owner: string;
  /**
   * The DayCount[] as JSON: FerretDB converts every nested value of a document it
   * reads, and a team's counts as sub-documents took it about 80 ms a page to read
   * (100,000 records over a year); one string each is one value.
   */
  days: string;
}

const daysOf = (doc: CountsDocument | null): DayCount[] => (doc ? JSON.parse(doc.days) : []);

export interface ListCountsOptions {
  db: Db;
  /** The records' collection. */
  collection: string;
  /** The record fields whose values are counted per day (equality filters a page may carry). */
  counted: readonly string[];
  /** The bucket marker of a team's day (list-buckets.ts). */
  marker(teamId: string, day: Day): string;
  markerField: string;
  logger?: Logger;
}

/** A day and how many of its records a filter matches. */
export interface DayTotal {
  day: Day;
  n: number;
}

/** Records added to one counts document, waiting for its lock. */
interface Additions {
  /** [day, the counted values of one record, when it was stored (ms)]. */
  records: [Day, Record<string, unknown>, number][];
  run: Promise<void>;
}

export class ListCounts {
  private readonly opts: ListCountsOptions;
  private readonly recounts = new Map<string, { running: Promise<void>; queued: Promise<void> | null }>();
  /** By counts document: the additions under way, and those queued after them. */
  private readonly additions = new Map<string, { running: Promise<void>; queued: Additions | null }>();
  /** Recounts due after deltas, by `<team>:<day>`. */
  private readonly rechecks = new Map<string, NodeJS.Timeout>();

  constructor(opts: ListCountsOptions) {
    this.opts = opts;
  }

  private get documents() {
    return this.opts.db.collection<CountsDocument>(LIST_COUNTS);
  }

  private owner(teamId: string): string {
    return `${this.opts.collection}:${teamId}`;
  }

  async createIndexes(): Promise<void> {
    await this.documents.createIndex({ owner: 1 });
  }

  /** Every [team, day] of this collection with a stored count. */
  async countedDays(): Promise<[string, Day][]> {
    const prefix = `${this.opts.collection}:`;
    const docs = (await this.documents.find({}).toArray()).filter((doc) => doc.owner.startsWith(prefix));
    return docs.flatMap((doc) => daysOf(doc).map((d): [string, Day] => [doc.owner.slice(prefix.length), d.d]));
  }

  /** Every [team, day] of this collection that took a delta and is not counted again yet. */
  async owedRechecks(): Promise<[string, Day][]> {
    const prefix = `${this.opts.collection}:`;
    const docs = (await this.documents.find({}).toArray()).filter((doc) => doc.owner.startsWith(prefix));
    return docs.flatMap((doc) => daysOf(doc).filter((d) => d.r).map((d): [string, Day] => [doc.owner.slice(prefix.length), d.d]));
  }

  /** The team's days holding records that match `equal` (counted fields only), oldest first, the day `null` last. */
  async days(teamId: string, equal: Record<string, unknown>): Promise<DayTotal[]> {
    const docs = await this.documents.find({ owner: this.owner(teamId) }).toArray();
    const fields = Object.entries(equal);
    const days: DayTotal[] = [];
    for (const doc of docs) {
      for (const day of daysOf(doc)) {
        const n = fields.length === 0 ? day.n : day.by.filter((c) => fields.every(([f, v]) => c.v[f] === v)).reduce((sum, c) => sum + c.n, 0);
        if (n > 0) days.push({ day: day.d, n });
      }
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
      this.opts.logger?.warn({ err, collection: this.opts.collection, team_id: teamId, day }, 'list counts of a day not recounted; its next write recounts them');
    }
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

  /**
   * Counts a new record of the team in its day, stored at `storedAt` (ms, when the store
   * acknowledged it): one more of its counted values, unless a recount that began after
   * that counted it already. Resolves
   * once stored (failures are logged: the recount that follows repairs the day).
   */
  async added(teamId: string, day: Day, record: Document, storedAt: number): Promise<void> {
    const values = Object.fromEntries(this.opts.counted.map((f) => [f, record[f] ?? null]));
    try {
      await this.queueAddition(teamId, day, values, storedAt);
    } catch (err) {
      this.opts.logger?.warn({ err, collection: this.opts.collection, team_id: teamId, day }, 'list count of a new record not stored; a recount follows');
    }
    this.recheckLater(teamId, day);
  }

  private queueAddition(teamId: string, day: Day, values: Record<string, unknown>, storedAt: number): Promise<void> {
    const id = this.documentId(teamId, day);
    const entry = this.additions.get(id);
    if (entry?.queued) {
      entry.queued.records.push([day, values, storedAt]);
      return entry.queued.run;
    }
    const batch: Additions = { records: [[day, values, storedAt]], run: Promise.resolve() };
    batch.run = (entry?.running.catch(() => {}) ?? Promise.resolve())
      .then(() => {
        const current = this.additions.get(id)!;
        current.running = batch.run;
        // The first batch starts at once: others may have queued behind it already.
        if (current.queued === batch) current.queued = null;
        return this.addNow(teamId, id, batch.records);
      })
      .finally(() => {
        const current = this.additions.get(id);
        if (current?.running === batch.run && !current.queued) this.additions.delete(id);
      });
    if (entry) entry.queued = batch;
    else this.additions.set(id, { running: batch.run, queued: null });
    return batch.run;
  }

  private async addNow(teamId: string, id: string, records: [Day, Record<string, unknown>, number][]): Promise<void> {
    const { db, counted } = this.opts;
    await withDocumentLock(db, LIST_COUNTS, id, async () => {
      const days = daysOf(await this.documents.findOne({ _id: id }));
      for (const [day, v, storedAt] of records) {
        let count = days.find((d) => d.d === day);
        // A recount that began after the record was stored counted it.
        if (count?.t !== undefined && count.t >= storedAt) continue;
        if (!count) days.push((count = { d: day, n: 0, by: [] }));
        count.n++;
        count.r = true;
        const combination = count.by.find((c) => counted.every((f) => c.v[f] === v[f]));
        if (combination) combination.n++;
        else count.by.push({ v, n: 1 });
      }
      days.sort((a, b) => byDay(a.d, b.d));
      await this.documents.updateOne({ _id: id }, { $set: { owner: this.owner(teamId), days: JSON.stringify(days) } }, { upsert: true });
    });
  }

  private recheckLater(teamId: string, day: Day): void {
    const key = `${teamId}:${day}`;
    clearTimeout(this.rechecks.get(key));
    const timer = setTimeout(() => {
      this.rechecks.delete(key);
      void this.recount(teamId, day);
    }, RECHECK_MS);
    timer.unref();
    this.rechecks.set(key, timer);
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
      const records = await db.collection(collection).find({ [markerField]: marker(teamId, day) }, { projection }).toArray();
      const doc = await this.documents.findOne({ _id: id });
      const days = daysOf(doc).filter((d) => d.d !== day);
      if (records.length > 0) days.push({ d: day, n: records.length, by: combinations(records, counted), t });
      days.sort((a, b) => byDay(a.d, b.d));
      await this.documents.updateOne({ _id: id }, { $set: { owner: this.owner(teamId), days: JSON.stringify(days) } }, { upsert: true });
    });
  }
}

/** Oldest first, the day `null` last. */
const byDay = (a: Day, b: Day): number => (a === null ? (b === null ? 0 : 1) : b === null ? -1 : a - b);

function combinations(records: Document[], counted: readonly string[]): Combination[] {
  const byKey = new Map<string, Combination>();
  for (const r of records) {
    const v = Object.fromEntries(counted.map((f) => [f, r[f] ?? null]));
    const key = JSON.stringify(counted.map((f) => v[f]));
    const c = byKey.get(key);
    if (c) c.n++;
    else byKey.set(key, { v, n: 1 });
  }
  return [...byKey.values()];
}
