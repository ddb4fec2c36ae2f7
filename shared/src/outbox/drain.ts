// The outbox relay's drain (relay.ts): documents a batch at a time, under their
// document locks (store/lock.ts), the ones writers take for their read-modify-write.
// A batch's locks are taken in one insert and given back in one delete; a document
// whose every event this process wrote and published from memory is emptied by one
// update matching its outbox exactly as written; any other is read, its events
// published in order and exactly those removed.
import { context } from '@opentelemetry/api';
import type { Collection, Db } from 'mongodb';
import type { DomainEvent } from '../events.ts';
import { DOCUMENT_LOCK_MS, tryDocumentLocks } from '../store/lock.ts';
import { extractTraceContext } from '../telemetry.ts';
import type { HandedOver } from './handed-over.ts';

export interface EventPublisher {
  publish(event: DomainEvent): Promise<void>;
}

interface OutboxDoc {
  _id: string;
  outbox?: DomainEvent[];
  outbox_pending?: boolean;
}

/** What the relay's memory knows a document by. */
export const docKey = (collection: string, id: string) => `${collection}\u0000${id}`;

export interface Drained {
  ok: boolean;
  published: number;
  /** Documents to name again: locked by someone else, left to memory or the writer, or whose publish failed. */
  again: string[];
}

export interface OutboxDrainOptions {
  db: Db;
  publisher: EventPublisher;
  memory: HandedOver;
  /** Documents drained at the same time. */
  concurrency: number;
  /** Whether the relay is stopping: documents not begun wait for the next pass. */
  stopping(): boolean;
  /** A publish failed (the drain stops beginning documents); `pending`: the documents left. */
  failed(err: unknown, collection: string, pending: number): void;
  /** Giving the locks back failed: they expire by themselves. */
  releaseFailed(err: unknown, collection: string): void;
}

export class OutboxDrain {
  private readonly opts: OutboxDrainOptions;

  constructor(opts: OutboxDrainOptions) {
    this.opts = opts;
  }

  /**
   * Takes the documents' locks in one insert (without waiting: those a writer or
   * another relay holds are named again), drains each and gives the locks back in
   * one delete. A document whose every event this process wrote and published from
   * memory costs one more operation; any other, three. With `graceMs`, a document
   * whose last event is younger is left to the process that wrote it.
   */
  async batch(name: string, ids: string[], graceMs = 0): Promise<Drained> {
    if (ids.length === 0) return { ok: true, published: 0, again: [] };
    const { db, concurrency } = this.opts;
    const col = db.collection<OutboxDoc>(name);
    const locks = await tryDocumentLocks(db, name, ids);
    const held = new Set(locks.held);
    const again = ids.filter((id) => !held.has(id));
    const within = (fraction: number) => Date.now() - locks.acquiredAt < DOCUMENT_LOCK_MS * fraction;
    let published = 0;
    let failure: unknown = null;
    try {
      await forEachConcurrently(locks.held, concurrency, async (id) => {
        // After a failed publish the broker is likely away: the documents not begun wait for the next pass.
        if (failure || this.opts.stopping()) return void again.push(id);
        const out = await this.locked(name, col, id, graceMs, within);
        published += out.published;
        failure ??= out.failure;
        if (out.left) again.push(id);
      });
      if (failure) this.opts.failed(failure, name, again.length);
      return { ok: !failure, published, again };
    } finally {
      await locks.release().catch((err) => this.opts.releaseFailed(err, name));
    }
  }

  /**
   * One locked document. When this process wrote every event it holds and published
   * them all from memory, one update empties it, matching the outbox exactly as
   * written. Otherwise it is read, its events published in order (skipping those
   * published from memory, stopping at one still being published from memory) and
   * the published ones removed. Publishing stops at half the lock period, and the
   * removal is skipped once the lock may have lapsed: those events go out again
   * later (a duplicate) rather than risk overwriting a writer's change. `left`: some
   * of its events are still there.
   */
  private async locked(
    name: string,
    col: Collection<OutboxDoc>,
    id: string,
    graceMs: number,
    within: (fraction: number) => boolean,
  ): Promise<{ published: number; failure: unknown; left: boolean }> {
    const { memory } = this.opts;
    const key = docKey(name, id);
    const sent = memory.allSent(key);
    if (sent && within(0.9)) {
      const r = await col.updateOne({ _id: id, outbox: sent }, { $set: { outbox: [], outbox_pending: false } });
      if (r.matchedCount === 1) {
        memory.removed(key, sent, true);
        return { published: 0, failure: null, left: false };
      }
    }
    const doc = await col.findOne({ _id: id });
    const events = doc?.outbox ?? [];
    if (!doc?.outbox_pending) return { published: 0, failure: null, left: false };
    const last = events.at(-1);
    if (graceMs > 0 && last && Date.now() - Date.parse(last.created_at) < graceMs)
      return { published: 0, failure: null, left: true };
    const out = await this.publishInOrder(events, within);
    if (within(0.9)) {
      await removePublished(col, id, events.length, out.done);
      memory.removed(key, out.done, out.done.length === events.length);
    }
    return { published: out.published, failure: out.failure, left: out.done.length < events.length };
  }

  /** A document's events published in order, up to the first failure, one still being published from memory, or half the lock period. */
  private async publishInOrder(
    events: DomainEvent[],
    within: (fraction: number) => boolean,
  ): Promise<{ done: DomainEvent[]; published: number; failure: unknown }> {
    const { memory, publisher } = this.opts;
    const done: DomainEvent[] = [];
    let published = 0;
    for (const event of events) {
      if (memory.isSent(event)) {
        done.push(event);
        continue;
      }
      // Being published from memory, here or by the replica that wrote it, or the lock is half gone: the rest go out later, in order.
      if (memory.isSomeoneElses(event) || !within(0.5)) break;
      try {
        await context.with(extractTraceContext(event.trace), () => publisher.publish(event));
        done.push(event);
        published++;
      } catch (failure) {
        return { done, published, failure };
      }
    }
    return { done, published, failure: null };
  }
}

/**
 * Removes the published events (the sub-documents exactly as read: $pullAll
 * matches by value, and FerretDB ignores $pull with a condition). When they were
 * all there was, the same write clears the flag; the $size filter makes that
 * write miss if a writer appended an event meanwhile.
 */
async function removePublished(
  col: Collection<OutboxDoc>,
  id: string,
  readCount: number,
  done: DomainEvent[],
): Promise<void> {
  if (done.length === readCount) {
    const r = await col.updateOne(
      { _id: id, outbox: { $size: readCount } },
      { $pullAll: { outbox: done }, $set: { outbox_pending: false } },
    );
    if (r.matchedCount === 1) return;
  }
  if (done.length > 0) await col.updateOne({ _id: id }, { $pullAll: { outbox: done } });
}

async function forEachConcurrently<T>(items: T[], limit: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
