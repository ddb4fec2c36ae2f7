// A lease its holder renews while it works: one runner of a long job at a time
// (a team's sync, jobs/team-syncs.ts), across processes. FerretDB 1.24 makes only a
// unique insert atomic, so the lease is time slots in the document locks' collection
// (lock.ts): slot n of `key` is the document `<key>:<n>`, covering [n, n + 1)
// periods. Slots are taken in order by an ordered insert, which stops at the first
// slot someone else holds, so nobody holds a slot after one another holds. Holding
// the slots up to b, the holder is safe until (b + 1) periods; renewing inserts the
// slots up to the one after now's. A holder whose lease ran out takes it again only
// if nobody did meanwhile. A holder that dies keeps the key for at most two periods;
// expired slots are never taken again, and the relay's sweep of expired locks
// removes them (they carry its marker, expires_hour).
import { randomUUID } from 'node:crypto';
import { MongoBulkWriteError, type Collection, type Db } from 'mongodb';
import { isDuplicateKey } from './duplicate-key.ts';
import { LOCKS_COLLECTION, type SlotDoc } from './lock.ts';
import { HOUR_MS, bucketOf } from './markers.ts';

export class RunLease {
  private readonly col: Collection<SlotDoc>;
  private readonly key: string;
  private readonly periodMs: number;
  private readonly owner = randomUUID();
  /** The last slot held (the slots held run from the one taken first to it). */
  private last: number;
  private readonly taken: string[] = [];

  private constructor(db: Db, key: string, periodMs: number, slot: number) {
    this.col = db.collection<SlotDoc>(LOCKS_COLLECTION);
    this.key = key;
    this.periodMs = periodMs;
    this.last = slot - 1;
  }

  /** The lease of `key` (periods of `periodMs`), or null at once when someone else holds it. */
  static async take(db: Db, key: string, periodMs: number, now = Date.now()): Promise<RunLease | null> {
    const slot = Math.floor(now / periodMs);
    const lease = new RunLease(db, key, periodMs, slot);
    if (await lease.takeUpTo(slot + 1)) return lease;
    await lease.release().catch(() => {});
    return null;
  }

  /** Date.now() up to which the lease is surely held. */
  get until(): number {
    return (this.last + 1) * this.periodMs;
  }

  /**
   * Makes the lease cover at least one period from now; false when someone else
   * holds the key. A lease that ran out (a holder slower than a period) is taken
   * again when nobody took it meanwhile.
   */
  async renew(now = Date.now()): Promise<boolean> {
    const slot = Math.floor(now / this.periodMs);
    if (this.last > slot) return true;
    if (this.last < slot) this.last = slot - 1;
    return this.takeUpTo(slot + 1);
  }

  async release(): Promise<void> {
    if (this.taken.length) await this.col.deleteMany({ owner: this.owner, _id: { $in: this.taken } });
  }

  /** Inserts the slots after the last held up to `slot`, in order; false when one of them is someone else's. */
  private async takeUpTo(slot: number): Promise<boolean> {
    const docs: SlotDoc[] = [];
    for (let s = this.last + 1; s <= slot; s++) {
      const expires = (s + 1) * this.periodMs;
      docs.push({
        _id: `${this.key}:${s}`,
        owner: this.owner,
        expires_at: new Date(expires),
        expires_hour: bucketOf(expires, HOUR_MS),
      });
    }
    let inserted = docs.length;
    try {
      await this.col.insertMany(docs, { ordered: true });
    } catch (err) {
      const refused = err instanceof MongoBulkWriteError ? [err.writeErrors].flat() : [];
      if (refused.length !== 1 || !isDuplicateKey(refused[0])) throw err;
      inserted = refused[0].index;
    }
    for (const d of docs.slice(0, inserted)) this.taken.push(d._id);
    this.last += inserted;
    return inserted === docs.length;
  }
}
