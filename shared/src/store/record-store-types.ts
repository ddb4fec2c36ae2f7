// What a RecordStore (record-store.ts) is made with and what its callers hand it:
// the record's required fields, the relay, the options, and the shape of a change
// (its write, its outcome, a batch's outcome, a run's mark).
import type { Db } from 'mongodb';
import type { AppError } from '../errors.ts';
import type { DomainEvent } from '../events.ts';
import type { IdKind } from '../ids.ts';
import type { MarkedWrites } from '../outbox/marked-writes.ts';
import type { ListBucketsOptions } from './list-buckets.ts';
import type { Day } from './list-counts.ts';
import type { SearchIndexOptions } from './search-index.ts';

/** What every record with an outbox has. */
export interface OwnedRecord {
  _id: string;
  team_id: string;
  version: number;
}

export interface Relay {
  /** Hands the events a write just stored in the document's outbox to the outbox relay (outbox/relay.ts). */
  kick(collection: string, id: string, events: DomainEvent[]): void;
  /** The relay's outbox marks (outbox/marks.ts); without them (a test's stub relay) every write uses the per-document outbox. */
  readonly marks?: MarkedWrites;
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
  /** Search in process (search-index.ts): every write also writes the marker of its time slot. */
  search?: Omit<SearchIndexOptions, 'db' | 'collection'>;
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

/** What updateReads came to: each record's result, the list days its writes moved records between, and the error that stopped it, if one did. */
export interface BatchOutcome<T> {
  results: (T | null)[];
  movedDays: Day[];
  failed: unknown;
}

/** A run's mark on the records it has done (readUnmarked, updateReads): one field and the run's value of it. */
export type Mark = Record<string, string>;
