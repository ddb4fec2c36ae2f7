// A service's records in the store (record-store-base.ts: one record at a time), and
// a team's records in batches for the team syncs (jobs/team-syncs.ts): a page read by
// what it does not carry yet, decided on and written under locks taken for many at
// once, and marked done.
import type { Filter } from 'mongodb';
import { serviceUnavailable } from '../errors.ts';
import type { Day } from './list-counts.ts';
import { leaseOf, lockKey, tryDocumentLocks, type Lease } from './lock.ts';
import { RecordStoreBase, nullWhenGone, type Decided } from './record-store-base.ts';
import type { BatchOutcome, Mark, OwnedRecord, Outcome } from './record-store-types.ts';

/** updateReads does not begin a record with less than this left of its locks' lease: the record's write must land within it. */
const BATCH_MARGIN_MS = 1000;
/** Records updateReads writes at once (each write holds one of the process's few store connections). */
const BATCH_WRITERS = 2;

const sameValue = (a: unknown, b: unknown) =>
  a instanceof Date && b instanceof Date ? a.getTime() === b.getTime() : a === b;

export class RecordStore<R extends OwnedRecord> extends RecordStoreBase<R> {
  /**
   * updateRead() of many records of one team at once: their locks are taken in one
   * insert and given back in one delete, and each record is decided on its read and
   * written only if still at that version (else read again under its lock and decided
   * again), BATCH_WRITERS at a time. Records left when the locks' lease runs low are
   * locked again; one whose lock someone else holds goes through updateRead() alone,
   * waiting for it. Resolves with each record's result in order (null: deleted since
   * its read, or not done), and the list days the writes moved records between, for
   * the caller to recount once for many batches (ListBuckets.recountDays). A record
   * that fails stops the batch: `failed` is its error; what was written is reported.
   * Other count changes are made as by update().
   * With `mark` (readUnmarked), every record done carries it after: in the write
   * `change` makes, or, when it makes none, in one command for all such records.
   */
  async updateReads<T>(
    reads: R[],
    decideChange: (current: R) => Promise<Outcome<R, T>>,
    mark?: Mark,
  ): Promise<BatchOutcome<T>> {
    const out: BatchOutcome<T> = { results: reads.map(() => null), movedDays: [], failed: undefined };
    const settled = new Set<number>();
    // Whether the last decision on a record wrote: the one a settled record was left by.
    const wrote = new Map<string, boolean>();
    const change = async (current: R): Promise<Outcome<R, T>> => {
      const outcome = await decideChange(current);
      wrote.set(current._id, outcome.write !== undefined);
      return mark && outcome.write
        ? { ...outcome, write: { ...outcome.write, set: { ...outcome.write.set, ...mark } } }
        : outcome;
    };
    const counts: (() => Promise<void>)[] = [];
    const moved = new Set<Day>();
    const done = (i: number, decided: Decided<T> | null) => {
      settled.add(i);
      if (!decided) return;
      out.results[i] = decided.result;
      for (const day of decided.movedDays) moved.add(day);
      if (decided.counts) counts.push(decided.counts);
    };
    const alone: number[] = [];
    let left = reads.map((_, i) => i);
    while (left.length && out.failed === undefined) {
      const locks = await tryDocumentLocks(
        this.opts.db,
        this.opts.collection,
        left.map((i) => reads[i]._id),
      ).catch((e: unknown) => {
        out.failed = e;
        return null;
      });
      if (!locks) break;
      const held = new Set(locks.held);
      const queue = left.filter((i) => held.has(reads[i]._id));
      alone.push(...left.filter((i) => !held.has(reads[i]._id)));
      const next: number[] = [];
      let decided = 0;
      const writer = async () => {
        for (let i = queue.shift(); i !== undefined && out.failed === undefined; i = queue.shift()) {
          const lease = leaseOf(lockKey(this.opts.collection, reads[i]._id), locks.acquiredAt);
          if (lease.until - Date.now() < BATCH_MARGIN_MS) {
            next.push(i);
            continue;
          }
          try {
            done(i, await this.decideOnRead(reads[i], change, lease, true));
            decided++;
          } catch (e) {
            out.failed ??= e;
          }
        }
      };
      // Every writer stops before the locks are given back.
      await Promise.all(Array.from({ length: BATCH_WRITERS }, writer));
      await locks.release().catch(() => {}); // expire by themselves otherwise
      // A store so slow that the lease ran low before the first record: each on its own.
      if (decided === 0) alone.push(...next);
      left = decided === 0 ? [] : next.sort((a, b) => a - b);
    }
    for (const i of alone) {
      if (out.failed !== undefined) break;
      await this.updateRead(reads[i], change)
        .then((result) => (out.results[i] = result))
        .catch(nullWhenGone)
        .then(() => settled.add(i))
        .catch((e: unknown) => (out.failed = e));
    }
    await Promise.all(counts.map((c) => c()));
    out.movedDays = [...moved];
    if (mark) {
      const unwritten = [...settled].map((i) => reads[i]).filter((r) => !wrote.get(r._id));
      await this.markAll(unwritten, mark).catch((e: unknown) => (out.failed ??= e));
    }
    return out;
  }

  /** Sets `mark` on `records` (of one team), one command; their version stays (a mark is not part of the record). */
  private async markAll(records: R[], mark: Mark): Promise<void> {
    if (records.length === 0) return;
    await this.documents.bulkWrite(
      records.map((r) => ({ updateOne: { filter: { _id: r._id, team_id: r.team_id }, update: { $set: mark } } })),
      { ordered: false },
    );
  }

  /** Under the record's lock: `change` decides on `read`, or on the record read again when it changed; null when it is gone. */
  private async decideOnRead<T>(
    read: R,
    change: (current: R) => Promise<Outcome<R, T>>,
    lease: Lease,
    deferMoves: boolean,
  ): Promise<Decided<T> | null> {
    const first = await this.decide(read, change, lease, true, deferMoves);
    if (first) return first;
    const current = await this.get(read.team_id, read._id).catch(nullWhenGone);
    if (!current) return null;
    const done = await this.decide(current, change, lease, false, deferMoves);
    if (!done) throw serviceUnavailable(`The ${this.opts.noun} changed during the update; retry`);
    return done;
  }

  /** Counts the team's list `days` again: those updateReads moved records between (ListBuckets.recountDays). */
  async recountDays(teamId: string, days: Day[]): Promise<void> {
    await this.lists?.recountDays(teamId, days);
  }

  /**
   * Up to `limit` of the team's records that `filter` selects (equalities) and that
   * do not carry `mark` yet, in no order: a run marks each record it has done
   * (updateReads) and reads the rest this way. FerretDB filters all of it in SQL and,
   * with no sort, decodes only `limit` records. Each keeps its outbox mark, so its
   * write stores its events under a mark as get()'s do.
   */
  async readUnmarked(teamId: string, filter: Partial<R>, mark: Mark, limit: number): Promise<R[]> {
    const [[field, value]] = Object.entries(mark);
    const { outbox_mark: _, ...projection } = this.projection();
    const found = await this.collection
      .find<R & { outbox_mark?: string | null }>({ ...filter, [field]: { $ne: value }, team_id: teamId } as Filter<R>, {
        projection,
        limit,
        batchSize: limit,
      })
      .toArray();
    return found.map(({ outbox_mark: read, ...record }) => {
      this.readMarks.set(record as R, read ?? null);
      return record as R;
    });
  }

  /**
   * Writes `moments(current)` (instants a team's time zone decides: due moments and
   * their signals) into each of `reads` where they differ, without events
   * (updateReads). Resolves with how many changed, the list days to recount, and
   * the error that stopped it, if one did.
   */
  async rewriteMoments(
    reads: R[],
    moments: (current: R) => Partial<R>,
    mark?: Mark,
  ): Promise<{ changed: number; movedDays: Day[]; failed: unknown }> {
    const { results, movedDays, failed } = await this.updateReads(
      reads,
      async (current) => {
        const set = moments(current);
        const same = (Object.keys(set) as (keyof R)[]).every((k) => sameValue(set[k], current[k]));
        return same ? { result: false } : { result: true, write: { set, events: [] } };
      },
      mark,
    );
    return { changed: results.filter(Boolean).length, movedDays, failed };
  }
}
