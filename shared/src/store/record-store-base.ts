// The data layer of a record that carries its events in an outbox: the one place
// where a service's records meet the store's quirks. A write stores the record and
// its events in one document write, under its writer's outbox mark (outbox/marks.ts:
// the relay publishes them and never writes the record again), then hands them to
// the relay. Inserts of the moment go to the store together, in one insertMany (a
// group commit: InsertBatcher). A read-modify-write holds the document lock
// (store/lock.ts: FerretDB 1.24 does not isolate concurrent updates of one document)
// and writes only if the version it read is still there. A unique index that
// refuses a write becomes the domain's error.
// Repositories in each service's `data/` build on RecordStore (record-store.ts), which
// adds batches of a team's records; domain code sees only them.
import { MongoServerError, type Collection, type Document, type Filter } from 'mongodb';
import { AppError, serviceUnavailable } from '../errors.ts';
import type { DomainEvent } from '../events.ts';
import { isId } from '../ids.ts';
import { pageWindow, parseSort, type ListQuery } from '../http/pagination.ts';
import { outboxMarked, outboxOnInsert, outboxUpdate } from '../outbox/fields.ts';
import type { MarkTicket } from '../outbox/marked-writes.ts';
import { isDuplicateKey } from './duplicate-key.ts';
import { InsertBatcher } from './insert-batcher.ts';
import { ListBuckets, type BucketPage, type DayRange } from './list-buckets.ts';
import type { Day } from './list-counts.ts';
import { withDocumentLock, type Lease } from './lock.ts';
import { signalSlots } from './markers.ts';
import type { OwnedRecord, Outcome, RecordStoreOptions, Write } from './record-store-types.ts';
import { SearchIndex } from './search-index.ts';

/** What a change under the lock came to: its result, what the list counts need of its write, if any, and the days it moved the record between when those are left to the caller. */
export interface Decided<T> {
  result: T;
  counts: (() => Promise<void>) | null;
  movedDays: Day[];
}

const OUTBOX_FIELDS = { outbox: 0, outbox_pending: 0, outbox_mark: 0, outbox_events: 0 } as const;

/**
 * How long a record insert waits for others to go to the store with it (InsertBatcher).
 * A command has a cost of its own beside its documents' (docs/benchmarks.md: 230-410 µs
 * of store CPU a document inserted in groups of 20, 390-560 in groups of 5), and
 * writes sent evenly 5 ms apart (200 a second) must overlap a window to share one: at
 * that rate, groups of two to three, each one command for the records and one for
 * their list count deltas.
 */
export const INSERT_LINGER_MS = 10;

/** What insertMany's unordered refusal of a duplicate is, for callers that tell it by isDuplicateKey. */
const duplicateKey = (collection: string) =>
  new MongoServerError({ message: `E11000 duplicate key error collection: ${collection}`, code: 11000 });

/** A record deleted since it was read: null rather than the domain's not-found. */
export const nullWhenGone = (e: unknown): null => {
  if (e instanceof AppError && e.status === 404) return null;
  throw e;
};

/** One record at a time; RecordStore (record-store.ts) adds a team's records in batches. */
export class RecordStoreBase<R extends OwnedRecord> {
  protected readonly opts: RecordStoreOptions<R>;
  /** For the repository's own queries (lists, counts); writes go through insert and update. */
  readonly collection: Collection<R>;
  /** Writes carry outbox fields the record type does not name. */
  protected readonly documents: Collection<{ _id: string }>;
  /** The list's day buckets, when the options ask for them. */
  readonly lists: ListBuckets | null;
  /** The search held in process, when the options ask for it. */
  readonly search: SearchIndex | null;
  private readonly inserts: InsertBatcher<{ _id: string }>;
  /**
   * The outbox mark each record read by get() was stored under (null: none), for the
   * write that follows: it may replace the events it holds only once they are published.
   */
  protected readonly readMarks = new WeakMap<R, string | null>();

  constructor(opts: RecordStoreOptions<R>) {
    this.opts = opts;
    this.collection = opts.db.collection<R>(opts.collection);
    this.documents = opts.db.collection<{ _id: string }>(opts.collection);
    this.lists = opts.lists ? new ListBuckets({ db: opts.db, collection: opts.collection, ...opts.lists }) : null;
    this.search = opts.search ? new SearchIndex({ db: opts.db, collection: opts.collection, ...opts.search }) : null;
    this.inserts = new InsertBatcher(this.documents, { lingerMs: INSERT_LINGER_MS });
  }

  /** The projection of every read: the outbox never leaves the store, heavy fields only when asked for. */
  projection(withFields: readonly (keyof R & string)[] = []): Document {
    const omit: Document = { ...OUTBOX_FIELDS };
    for (const f of this.opts.heavy ?? []) if (!withFields.includes(f)) omit[f] = 0;
    return omit;
  }

  /**
   * The page `q` asks for, sorted by `q.sort` or `fallback`, of the team's records whose
   * counted fields hold `filters`, read from the list buckets (list-buckets.ts); null
   * when they cannot serve it (a filter or sort they do not count, or no buckets).
   */
  protected async bucketPage(
    teamId: string,
    filters: object,
    q: ListQuery,
    fallback: string,
    days?: DayRange,
  ): Promise<BucketPage<R> | null> {
    const sort = parseSort(q.sort, fallback);
    return (await this.lists?.listPage<R>(teamId, filters, sort, pageWindow(q), this.projection(), days)) ?? null;
  }

  /** The team's record, or the domain's not-found error. */
  async get(teamId: string, id: string, withFields: readonly (keyof R & string)[] = []): Promise<R> {
    if (!isId(this.opts.idKind, id)) throw this.opts.notFound();
    const filter = { _id: id, team_id: teamId } as Filter<R>;
    const { outbox_mark: _, ...projection } = this.projection(withFields);
    const found = await this.collection.findOne<R & { outbox_mark?: string | null }>(filter, { projection });
    if (!found) throw this.opts.notFound();
    const { outbox_mark: mark, ...record } = found;
    this.readMarks.set(record as R, mark ?? null);
    return record as R;
  }

  /**
   * Stores a new record with its events, in one insertMany with the other records
   * inserted within INSERT_LINGER_MS; resolves once it is stored and counted in its
   * list day (a delta that goes with those of the same group, list-counts.ts).
   */
  async insert(record: R, events: DomainEvent[]): Promise<void> {
    const doc = { ...record, ...this.slots(record), ...this.lists?.markerOf(record), ...this.search?.markerOf(record) };
    const ticket =
      events.length > 0 ? ((await this.opts.relay.marks?.take(this.opts.collection, record._id)) ?? null) : null;
    const outbox = events.length === 0 ? {} : ticket ? outboxMarked(ticket.mark, events) : outboxOnInsert(events);
    let outcome: 'inserted' | 'duplicate';
    try {
      outcome = await this.inserts.insert({ ...doc, ...outbox });
    } catch (e) {
      ticket?.failed();
      throw e;
    }
    if (outcome === 'duplicate') {
      ticket?.refused();
      // Its id taken by the team's record of that id: an earlier run of this same request
      // (a POST run again under its Idempotency-Key, ids.withIdSeed) stored it, and its events.
      if (
        await this.collection.findOne({ _id: record._id, team_id: record.team_id } as Filter<R>, {
          projection: { _id: 1 },
        })
      )
        return;
      throw this.refused(duplicateKey(this.opts.collection), record);
    }
    const storedAt = Date.now();
    if (ticket) ticket.stored(events);
    else if (events.length > 0) this.opts.relay.kick(this.opts.collection, record._id, events);
    await this.lists?.added(record, storedAt);
  }

  /**
   * Reads the team's record under its document lock, lets `change` decide, and
   * writes what it returns (fields and events in one write, the version bumped)
   * only if no one changed the record meanwhile. Resolves with `change`'s result.
   */
  async update<T>(
    teamId: string,
    id: string,
    change: (current: R) => Promise<Outcome<R, T>>,
    withFields: readonly (keyof R & string)[] = [],
  ): Promise<T> {
    if (!isId(this.opts.idKind, id)) throw this.opts.notFound();
    return this.locked(id, async (lease) => {
      const done = await this.decide(await this.get(teamId, id, withFields), change, lease);
      if (!done) throw serviceUnavailable(`The ${this.opts.noun} changed during the update; retry`);
      return done;
    });
  }

  /**
   * update() of a record read before the lock (get, with `withFields` of the heavy ones): under
   * the lock, `change` decides on that read and its write goes through only if the
   * record is still at the version read, so the record is read once. When it changed
   * meanwhile, or `change` writes nothing, it is read under the lock and `change`
   * decides again on what is there.
   */
  async updateRead<T>(
    read: R,
    change: (current: R) => Promise<Outcome<R, T>>,
    withFields: readonly (keyof R & string)[] = [],
  ): Promise<T> {
    return this.locked(read._id, async (lease) => {
      const first = await this.decide(read, change, lease, true);
      if (first) return first;
      const done = await this.decide(await this.get(read.team_id, read._id, withFields), change, lease);
      if (!done) throw serviceUnavailable(`The ${this.opts.noun} changed during the update; retry`);
      return done;
    });
  }

  /** Runs `decided` under the record's lock; the list counts after the lock is given back (a recount waits for the counts' own lock). */
  private async locked<T>(id: string, decided: (lease: Lease) => Promise<Decided<T>>): Promise<T> {
    const { result, counts } = await withDocumentLock(this.opts.db, this.opts.collection, id, decided);
    await counts?.();
    return result;
  }

  /**
   * Lets `change` decide on `current` and writes what it returns; null when the
   * record is no longer at current's version (nothing written), or, with
   * `onlyWrites`, when `change` writes nothing. With `deferMoves`, the days a write
   * moves the record between are handed back instead of recounted.
   */
  protected async decide<T>(
    current: R,
    change: (current: R) => Promise<Outcome<R, T>>,
    lease: Lease,
    onlyWrites = false,
    deferMoves = false,
  ): Promise<Decided<T> | null> {
    const { result, write } = await change(current);
    if (!write) return onlyWrites ? null : { result, counts: null, movedDays: [] };
    if (!(await this.write(current, write, lease))) return null;
    const storedAt = Date.now();
    const lists = this.lists;
    const movedDays = deferMoves && lists ? lists.movedDays(current, write.set) : [];
    const counts = lists && movedDays.length === 0 ? () => lists.written(current, write.set, storedAt) : null;
    return { result, counts, movedDays };
  }

  /**
   * The events the record holds that may not be published yet, oldest first: its
   * per-document outbox, and those under its mark unless they are known published.
   * For a delete that first moves them elsewhere (a tombstone).
   */
  protected async unpublishedEvents(id: string): Promise<DomainEvent[]> {
    type Raw = { outbox?: DomainEvent[]; outbox_mark?: string | null; outbox_events?: string | null };
    const raw = await this.documents.findOne<Raw>(
      { _id: id },
      { projection: { outbox: 1, outbox_mark: 1, outbox_events: 1 } },
    );
    const pending = raw?.outbox ?? [];
    if (!raw?.outbox_events) return pending;
    const marks = this.opts.relay.marks;
    if (marks && (await marks.settled(this.opts.collection, id, raw.outbox_mark ?? null))) return pending;
    const marked = JSON.parse(raw.outbox_events) as DomainEvent[];
    return [...pending, ...marked].sort((a, b) => a.created_at.localeCompare(b.created_at));
  }

  /**
   * Writes over `current` (checking the lease right before); false when the record is
   * no longer at its version. Events go under a mark, replacing those the record holds,
   * when those are known published; otherwise (a record not read by get(), events of
   * another writer not out yet) they are added to its per-document outbox.
   */
  private async write(current: R, { set, events }: Write<R>, lease: Lease): Promise<boolean> {
    const filter = { _id: current._id, team_id: current.team_id, version: current.version };
    const $set = {
      ...set,
      ...this.slots(set),
      ...this.lists?.markerOfUpdate(current, set),
      ...this.search?.markerOf(current),
      version: current.version + 1,
    };
    const ticket = events.length > 0 ? await this.markFor(current) : null;
    const update = ticket
      ? { $set: { ...$set, ...outboxMarked(ticket.mark, events) } }
      : outboxUpdate({ $set }, events);
    let matched: boolean;
    try {
      lease.check();
      matched = (await this.documents.updateOne(filter, update)).matchedCount === 1;
    } catch (e) {
      if (e instanceof AppError) ticket?.refused();
      else ticket?.failed();
      throw this.refused(e, { ...current, ...set });
    }
    if (ticket) {
      if (matched) ticket.stored(events);
      else ticket.refused();
    } else if (matched && events.length > 0) this.opts.relay.kick(this.opts.collection, current._id, events);
    return matched;
  }

  /** A mark for a write over `current`, when the events it holds may be replaced; else null. */
  private async markFor(current: R): Promise<MarkTicket | null> {
    const marks = this.opts.relay.marks;
    const read = this.readMarks.get(current);
    if (!marks || read === undefined || !(await marks.settled(this.opts.collection, current._id, read))) return null;
    return marks.take(this.opts.collection, current._id);
  }

  /** The slot markers of the signals' due fields that `fields` sets. */
  private slots(fields: Partial<R>): Record<string, number | null> {
    const due = (this.opts.signalFields ?? [])
      .filter((f) => f in fields)
      .map((f): [string, Date | null] => [f, fields[f] as Date | null]);
    return signalSlots(Object.fromEntries(due));
  }

  private refused(e: unknown, record: R): unknown {
    return isDuplicateKey(e) && this.opts.duplicate ? this.opts.duplicate(record) : e;
  }
}
