// The data layer of a record that carries its events in an outbox: the one place
// where a service's records meet the store's quirks. A write stores the record and
// its events in one document write, then nudges the relay. A read-modify-write
// holds the document lock (store/lock.ts: FerretDB 1.24 does not isolate
// concurrent updates of one document) and writes only if the version it read is
// still there. A unique index that refuses a write becomes the domain's error.
// Repositories in each service's `data/` build on it; domain code sees only them.
import type { Collection, Db, Document, Filter } from 'mongodb';
import { AppError, serviceUnavailable } from '../errors.ts';
import type { DomainEvent } from '../events.ts';
import { isId, type IdKind } from '../ids.ts';
import { outboxOnInsert, outboxUpdate } from '../outbox/fields.ts';
import { isDuplicateKey } from './duplicate-key.ts';
import { ListBuckets, type ListBucketsOptions } from './list-buckets.ts';
import { withDocumentLock, type Lease } from './lock.ts';
import { signalSlots } from './markers.ts';

/** What every record with an outbox has. */
export interface OwnedRecord {
  _id: string;
  team_id: string;
  version: number;
}

export interface Relay {
  /** Hands the events a write just stored to the outbox relay (outbox/relay.ts). */
  kick(collection: string, id: string, events: DomainEvent[]): void;
}

export interface RecordStoreOptions<R extends OwnedRecord> {
  db: Db;
  collection: string;
  relay: Relay;
  /** Ids not of this kind name no record: answered as not found without a query. */
  idKind: IdKind;
  /** The record's name in messages ("The client changed during the update; retry"). */
  noun: string;
  notFound: () => AppError;
  /** The domain's error when a unique index refuses the record (the record as it was to be written). */
  duplicate?: (record: R) => AppError;
  /** Fields left out of every read unless asked for (large ones, such as a timeline). */
  heavy?: readonly (keyof R & string)[];
  /** Due fields of the record's time signals: every write that sets one also writes its slot marker (jobs/time-signals.ts). */
  signalFields?: readonly (keyof R & string)[];
  /** The list's default page by day buckets (list-buckets.ts): every write of the sort value writes the marker, and writes that add, move or recount a record recount its days. */
  lists?: Omit<ListBucketsOptions, 'db' | 'collection'>;
}

/** What an update writes: the fields to set (the version is bumped here) and the events to append. */
export interface Write<R> {
  set: Partial<R>;
  events: DomainEvent[];
}

/** What an update's change function returns: the answer, and the write if anything changed. */
export interface Outcome<R, T> {
  result: T;
  write?: Write<R>;
}

/** What a change under the lock came to: its result, and what the list counts need of its write, if any. */
interface Decided<T> {
  result: T;
  counts: (() => Promise<void>) | null;
}

const OUTBOX_FIELDS = { outbox: 0, outbox_pending: 0 } as const;

const sameValue = (a: unknown, b: unknown) => (a instanceof Date && b instanceof Date ? a.getTime() === b.getTime() : a === b);

export class RecordStore<R extends OwnedRecord> {
  private readonly opts: RecordStoreOptions<R>;
  /** For the repository's own queries (lists, counts); writes go through insert and update. */
  readonly collection: Collection<R>;
  /** Writes carry outbox fields the record type does not name. */
  private readonly documents: Collection<{ _id: string }>;
  /** The list's day buckets, when the options ask for them. */
  readonly lists: ListBuckets | null;

  constructor(opts: RecordStoreOptions<R>) {
    this.opts = opts;
    this.collection = opts.db.collection<R>(opts.collection);
    this.documents = opts.db.collection<{ _id: string }>(opts.collection);
    this.lists = opts.lists ? new ListBuckets({ db: opts.db, collection: opts.collection, ...opts.lists }) : null;
  }

  /** The projection of every read: the outbox never leaves the store, heavy fields only when asked for. */
  projection(withFields: readonly (keyof R & string)[] = []): Document {
    const omit: Document = { ...OUTBOX_FIELDS };
    for (const f of this.opts.heavy ?? []) if (!withFields.includes(f)) omit[f] = 0;
    return omit;
  }

  /** The team's record, or the domain's not-found error. */
  async get(teamId: string, id: string, withFields: readonly (keyof R & string)[] = []): Promise<R> {
    if (!isId(this.opts.idKind, id)) throw this.opts.notFound();
    const filter = { _id: id, team_id: teamId } as Filter<R>;
    const found = await this.collection.findOne<R>(filter, { projection: this.projection(withFields) });
    if (!found) throw this.opts.notFound();
    return found;
  }

  /** Stores a new record with its events. */
  async insert(record: R, events: DomainEvent[]): Promise<void> {
    let storedAt: number;
    try {
      await this.documents.insertOne({ ...record, ...this.slots(record), ...this.lists?.markerOf(record), ...outboxOnInsert(events) });
      storedAt = Date.now();
    } catch (e) {
      // Its id taken by the team's record of that id: an earlier run of this same request
      // (a POST run again under its Idempotency-Key, ids.withIdSeed) stored it, and its events.
      if (isDuplicateKey(e) && (await this.collection.findOne({ _id: record._id, team_id: record.team_id } as Filter<R>, { projection: { _id: 1 } }))) return;
      throw this.refused(e, record);
    }
    if (events.length > 0) this.opts.relay.kick(this.opts.collection, record._id, events);
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
   * update() of a record read before the lock (get, without heavy fields): under
   * the lock, `change` decides on that read and its write goes through only if the
   * record is still at the version read, so the record is read once. When it changed
   * meanwhile, or `change` writes nothing, it is read under the lock and `change`
   * decides again on what is there.
   */
  async updateRead<T>(read: R, change: (current: R) => Promise<Outcome<R, T>>): Promise<T> {
    return this.locked(read._id, async (lease) => {
      const first = await this.decide(read, change, lease, true);
      if (first) return first;
      const done = await this.decide(await this.get(read.team_id, read._id), change, lease);
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
   * `onlyWrites`, when `change` writes nothing.
   */
  private async decide<T>(current: R, change: (current: R) => Promise<Outcome<R, T>>, lease: Lease, onlyWrites = false): Promise<Decided<T> | null> {
    const { result, write } = await change(current);
    if (!write) return onlyWrites ? null : { result, counts: null };
    lease.check();
    if (!(await this.write(current, write))) return null;
    const storedAt = Date.now();
    const lists = this.lists;
    return { result, counts: lists ? () => lists.written(current, write.set, storedAt) : null };
  }

  /**
   * Writes `moments(current)` (instants a team's time zone decides: due moments and
   * their signals) into each of the team's records that `filter` selects (equality
   * only, what FerretDB filters in SQL) where they differ, without events. A record
   * gone since the list is skipped. Resolves with how many changed.
   */
  async rewriteMoments(teamId: string, filter: Partial<R>, moments: (current: R) => Partial<R>): Promise<number> {
    const rows = await this.collection.find({ ...filter, team_id: teamId } as Filter<R>, { projection: { _id: 1 } }).toArray();
    let changed = 0;
    for (const { _id } of rows) {
      const wrote = await this.update(teamId, String(_id), async (current) => {
        const set = moments(current);
        const same = (Object.keys(set) as (keyof R)[]).every((k) => sameValue(set[k], current[k]));
        return same ? { result: false } : { result: true, write: { set, events: [] } };
      }).catch((e: unknown) => {
        if (e instanceof AppError && e.status === 404) return false;
        throw e;
      });
      if (wrote) changed++;
    }
    return changed;
  }

  /** Writes over `current`; false when the record is no longer at its version. */
  private async write(current: R, { set, events }: Write<R>): Promise<boolean> {
    const filter = { _id: current._id, team_id: current.team_id, version: current.version };
    const update = outboxUpdate({ $set: { ...set, ...this.slots(set), ...this.lists?.markerOfUpdate(current, set), version: current.version + 1 } }, events);
    let matched: boolean;
    try {
      matched = (await this.documents.updateOne(filter, update)).matchedCount === 1;
    } catch (e) {
      throw this.refused(e, { ...current, ...set });
    }
    if (matched && events.length > 0) this.opts.relay.kick(this.opts.collection, current._id, events);
    return matched;
  }

  /** The slot markers of the signals' due fields that `fields` sets. */
  private slots(fields: Partial<R>): Record<string, number | null> {
    const due = (this.opts.signalFields ?? []).filter((f) => f in fields).map((f): [string, Date | null] => [f, fields[f] as Date | null]);
    return signalSlots(Object.fromEntries(due));
  }

  private refused(e: unknown, record: R): unknown {
    return isDuplicateKey(e) && this.opts.duplicate ? this.opts.duplicate(record) : e;
  }
}
