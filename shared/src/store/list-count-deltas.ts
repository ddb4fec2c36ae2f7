// New records, and records whose counted values changed within their day, on their
// way into their day counts (list-counts.ts): one document each, added by a unique insert (the one write FerretDB 1.24 makes atomically, so no lock),
// grouped with the other creates of the moment into one insertMany, read by pages
// beside the counts, and deleted once a fold has counted them.
import type { Db } from 'mongodb';
import { InsertBatcher } from './insert-batcher.ts';
import type { Day } from './list-day.ts';

export const LIST_COUNT_DELTAS = 'list_count_deltas';

export interface CountDelta {
  /**
   * `<collection>:<record id>`: a record counts once, whatever retries its create;
   * a move, `<collection>:<record id>:<version written>`.
   */
  _id: string;
  /** The team's counts, `<collection>:<team>`, as in the counts documents. */
  owner: string;
  /** The counts document it is folded into. */
  doc: string;
  d: Day;
  /** The record's counted values. */
  v: Record<string, unknown>;
  /** A record that changed counted values within its day (a move): its values before; the day's total stays. */
  from?: Record<string, unknown>;
  /** When the store acknowledged the record (ms). */
  at: number;
}

export class CountDeltas {
  private readonly db: Db;
  private readonly batcher: InsertBatcher<CountDelta>;

  constructor(db: Db) {
    this.db = db;
    this.batcher = new InsertBatcher(this.collection);
  }

  private get collection() {
    return this.db.collection<CountDelta>(LIST_COUNT_DELTAS);
  }

  async createIndexes(): Promise<void> {
    await this.collection.createIndex({ owner: 1 });
    await this.collection.createIndex({ doc: 1 });
  }

  /** Resolves once stored (a retried create's delta is there already, which is as good). */
  async add(delta: CountDelta): Promise<void> {
    await this.batcher.insert(delta);
  }

  ofOwner(owner: string): Promise<CountDelta[]> {
    return this.collection.find({ owner }).toArray();
  }

  ofDocument(doc: string): Promise<CountDelta[]> {
    return this.collection.find({ doc }).toArray();
  }

  /** Every delta of the collections whose owners start with `prefix`. */
  async withPrefix(prefix: string): Promise<CountDelta[]> {
    return (await this.collection.find({}).toArray()).filter((d) => d.owner.startsWith(prefix));
  }

  /**
   * Deletes the document's deltas `ids`. The local store cannot push `$in` down: the
   * equality on `doc` confines the match in Go to that document's deltas, where `_id`
   * alone had it decode every team's deltas on each fold.
   */
  async remove(doc: string, ids: string[]): Promise<void> {
    if (ids.length > 0) await this.collection.deleteMany({ doc, _id: { $in: ids } });
  }
}
