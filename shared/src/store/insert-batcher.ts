// Inserts into one collection, grouped: each caller awaits its own document, and
// the documents that arrive within `lingerMs` of the first one waiting (or while
// `maxInFlight` insertMany commands are under way) go together in one command
// (group commit), so the store sees one round trip for many documents. Unordered,
// so one document a unique index refuses does not hold back the others: its caller
// learns it was a duplicate. A document the store refuses otherwise fails only its
// own caller: the others of its group are stored, each settled on its own. A store
// that cannot do the work at all (isStoreUnavailable) fails the whole group at once.
import { isDeepStrictEqual } from 'node:util';
import {
  BSON,
  MongoBulkWriteError,
  type Collection,
  type Document,
  type Filter,
  type OptionalUnlessRequiredId,
} from 'mongodb';
import { isDuplicateKey } from './duplicate-key.ts';
import { isStoreUnavailable } from './store-errors.ts';

export type InsertOutcome = 'inserted' | 'duplicate';

export interface InsertBatcherOptions {
  /**
   * How long the first document waiting waits for others. 0: only those added in
   * the same turn of the event loop (callers released together by an earlier group
   * go together). Default 0.
   */
  lingerMs?: number;
  /** Documents per insertMany at most. Default 500. */
  maxBatch?: number;
  /** insertMany commands under way at once. Default 2. */
  maxInFlight?: number;
}

interface Waiting<T> {
  doc: T;
  resolve(outcome: InsertOutcome): void;
  reject(err: unknown): void;
}

export class InsertBatcher<T extends Document> {
  private readonly collection: Collection<T>;
  private readonly lingerMs: number;
  private readonly maxBatch: number;
  private readonly maxInFlight: number;
  private waiting: Waiting<T>[] = [];
  private inFlight = 0;
  /** Set while the waiting documents linger. */
  private lingering = false;

  constructor(collection: Collection<T>, opts: InsertBatcherOptions = {}) {
    this.collection = collection;
    this.lingerMs = opts.lingerMs ?? 0;
    this.maxBatch = opts.maxBatch ?? 500;
    this.maxInFlight = opts.maxInFlight ?? 2;
  }

  /** Inserts `doc` with the documents of its group: 'duplicate' when a unique index already holds its twin. */
  insert(doc: T): Promise<InsertOutcome> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ doc, resolve, reject });
      if (this.waiting.length >= this.maxBatch) this.flush();
      else if (!this.lingering) {
        this.lingering = true;
        const done = () => {
          this.lingering = false;
          this.flush();
        };
        if (this.lingerMs > 0) setTimeout(done, this.lingerMs);
        else setImmediate(done);
      }
    });
  }

  private flush(): void {
    while (this.inFlight < this.maxInFlight && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.maxBatch);
      this.inFlight++;
      void this.send(batch).finally(() => {
        this.inFlight--;
        if (!this.lingering) this.flush();
      });
    }
  }

  private async send(batch: Waiting<T>[]): Promise<void> {
    try {
      await this.collection.insertMany(
        batch.map((w) => w.doc as OptionalUnlessRequiredId<T>),
        { ordered: false },
      );
      for (const w of batch) w.resolve('inserted');
    } catch (e) {
      // The store is unavailable (cut, timed out, its backend gone): the whole group fails, its callers retry, and what did go in is then a duplicate.
      if (isStoreUnavailable(e)) {
        for (const w of batch) w.reject(e);
        return;
      }
      const failed = writeErrorsOf(e, batch.length);
      const alone: Waiting<T>[] = [];
      if (failed) {
        // Every document is accounted for: inserted, a duplicate, or refused (tried again alone, for its own error).
        const errorAt = new Map(failed.map((w) => [w.index, w]));
        batch.forEach((w, i) => {
          const error = errorAt.get(i);
          if (!error) w.resolve('inserted');
          else if (isDuplicateKey(error)) w.resolve('duplicate');
          else alone.push(w);
        });
      } else alone.push(...batch);
      await this.settleAlone(alone);
    }
  }

  /**
   * Inserts each document on its own, one after the other, so each caller gets its
   * own outcome: those the store refused, and every document of a group it refused
   * without saying which (FerretDB 1.24 answers a string holding NUL so, having
   * stored the documents before it). Once the store is unavailable, the rest fail
   * with it.
   */
  private async settleAlone(waiting: Waiting<T>[]): Promise<void> {
    for (const [i, w] of waiting.entries()) {
      try {
        w.resolve(await this.insertAlone(w.doc));
      } catch (e) {
        if (!isStoreUnavailable(e)) {
          w.reject(e);
          continue;
        }
        for (const rest of waiting.slice(i)) rest.reject(e);
        return;
      }
    }
  }

  /** A duplicate key here may be the document itself, stored by the group before the store gave up on it. */
  private async insertAlone(doc: T): Promise<InsertOutcome> {
    try {
      await this.collection.insertOne(doc as OptionalUnlessRequiredId<T>);
      return 'inserted';
    } catch (e) {
      if (!isDuplicateKey(e)) throw e;
      const stored = await this.collection.findOne({ _id: doc._id as unknown } as Filter<T>);
      return isDeepStrictEqual(stored, this.asStored(doc)) ? 'inserted' : 'duplicate';
    }
  }

  /** `doc` as a read of it gives it back (undefined fields null, numbers as BSON types them). */
  private asStored(doc: T): Document {
    const options = this.collection.bsonOptions;
    return BSON.deserialize(BSON.serialize(doc, options), options);
  }
}

/**
 * The per-document errors of an unordered insertMany of `size` documents, or null
 * when it failed otherwise: as a whole (a network error comes as a bulk error with
 * no write errors), or with documents neither inserted nor refused.
 */
function writeErrorsOf(e: unknown, size: number): { index: number; code?: number; message?: string }[] | null {
  if (!(e instanceof MongoBulkWriteError) || e.writeConcernError) return null;
  const errors = [e.writeErrors].flat().filter((w) => w !== undefined);
  if (errors.length === 0 || e.insertedCount + errors.length !== size) return null;
  return errors.map((w) => ({ index: w.index, code: w.code, message: w.errmsg }));
}
