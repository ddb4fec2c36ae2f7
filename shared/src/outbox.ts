// Transactional outbox without multi-document transactions: a record carries its
// pending events in its own `outbox` array, written by the same single-document
// write as the change. A relay publishes them and removes exactly what it published.
//
// Guarantees: nothing is lost if the process or the broker dies at any point;
// duplicates only when the process dies between a confirmed publish and the
// $pullAll (consumers dedupe by event id). Events of one document go out in order;
// there is no order between documents.
import { randomUUID } from 'node:crypto';
import type { Db, Document } from 'mongodb';
import type { DomainEvent } from './events.ts';
import type { Logger } from './broker.ts';

export interface OutboxFields {
  outbox: DomainEvent<any>[];
  outbox_pending: true;
}

/** Fields to spread into a new document so its events are written with it. */
export function outboxOnInsert(events: DomainEvent<any>[]): OutboxFields {
  return { outbox: events, outbox_pending: true };
}

/**
 * Adds events to an operator-style update document ({ $set, $inc, ... }) without
 * changing its other effects: `$push` to `outbox` and `$set.outbox_pending = true`.
 */
export function outboxUpdate<U extends Document>(update: U, events: DomainEvent<any>[]): U {
  if (events.length === 0) return update;
  for (const key of Object.keys(update)) {
    if (!key.startsWith('$')) throw new Error(`outboxUpdate needs an operator update document, got field "${key}"`);
  }
  const $set = { ...(update.$set ?? {}), outbox_pending: true };
  const $push = { ...(update.$push ?? {}) };
  if ('outbox' in $push) throw new Error('outboxUpdate: the update already pushes to outbox');
  $push.outbox = { $each: events };
  return { ...update, $set, $push };
}

/** The index the relay's claim query uses, for each collection that carries an outbox. */
export async function createOutboxIndexes(db: Db, collections: string[]): Promise<void> {
  for (const name of collections) await db.collection(name).createIndex({ outbox_pending: 1 });
}

export interface EventPublisher {
  publish(event: DomainEvent): Promise<void>;
}

export interface OutboxRelayOptions {
  db: Db;
  collections: string[];
  publisher: EventPublisher;
  logger: Logger;
  /** Pause between passes when nothing kicks the relay. Default 1000. */
  intervalMs?: number;
  /**
   * How long a claimed document stays reserved for this relay. It must exceed the
   * time to publish one document's events, or another replica may take over and
   * publish them again. Default 30000.
   */
  leaseMs?: number;
}

interface OutboxDoc {
  _id: any;
  outbox?: DomainEvent[];
}

export class OutboxRelay {
  private readonly db: Db;
  private readonly collections: string[];
  private readonly publisher: EventPublisher;
  private readonly log: Logger;
  private readonly intervalMs: number;
  private readonly leaseMs: number;
  /** Lease owner token: lets this relay release only leases it holds. */
  private readonly owner = randomUUID();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;
  private again = false;
  private started = false;
  private stopping = false;
  private failing = false;

  constructor(opts: OutboxRelayOptions) {
    this.db = opts.db;
    this.collections = opts.collections;
    this.publisher = opts.publisher;
    this.log = opts.logger;
    this.intervalMs = opts.intervalMs ?? 1000;
    this.leaseMs = opts.leaseMs ?? 30_000;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.stopping = false;
    this.schedule(0);
  }

  /** Runs a pass soon (call right after a write that queued events). */
  kick(): void {
    if (!this.started) return;
    if (this.running) this.again = true;
    else this.schedule(0);
  }

  /** Stops scheduling and waits for the pass in flight. */
  async stop(): Promise<void> {
    this.started = false;
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running?.catch(() => {});
    this.stopping = false;
  }

  /**
   * One pass over every collection; resolves with the number of events published.
   * Publishing stops at the first failure (the broker is probably down).
   */
  async runOnce(): Promise<number> {
    while (this.running) await this.running.catch(() => {});
    const p = this.pass().finally(() => {
      if (this.running === p) this.running = null;
    });
    this.running = p;
    return p;
  }

  private schedule(delayMs: number): void {
    if (!this.started) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.runOnce()
        .catch((err) => this.log.error({ err }, 'outbox pass failed'))
        .finally(() => {
          const again = this.again;
          this.again = false;
          this.schedule(again ? 0 : this.intervalMs);
        });
    }, delayMs);
  }

  private async pass(): Promise<number> {
    let published = 0;
    for (const name of this.collections) {
      const col = this.db.collection<OutboxDoc>(name);
      for (;;) {
        if (this.stopping) return published;
        const now = new Date();
        // FerretDB 1.24 rejects a projection on findAndModify, so the whole document comes back.
        const doc = await col.findOneAndUpdate(
          { outbox_pending: true, $or: [{ outbox_lease: { $exists: false } }, { outbox_lease: { $lt: now } }] },
          { $set: { outbox_lease: new Date(now.getTime() + this.leaseMs), outbox_lease_owner: this.owner } },
          { returnDocument: 'after' },
        );
        if (!doc) break;
        const result = await this.drain(name, doc);
        published += result.published;
        if (!result.ok) return published;
      }
    }
    if (this.failing && published > 0) {
      this.failing = false;
      this.log.info({}, 'outbox publishing resumed');
    }
    return published;
  }

  /** Publishes one claimed document's events in order and removes the published ones. */
  private async drain(name: string, doc: OutboxDoc): Promise<{ ok: boolean; published: number }> {
    const col = this.db.collection<OutboxDoc>(name);
    const events = doc.outbox ?? [];
    const done: DomainEvent[] = [];
    let failure: unknown = null;
    for (const event of events) {
      try {
        await this.publisher.publish(event);
        done.push(event);
      } catch (err) {
        failure = err;
        break;
      }
    }
    // The sub-documents exactly as read: $pullAll matches them by value, and
    // FerretDB ignores $pull with a condition.
    if (done.length > 0) await col.updateOne({ _id: doc._id }, { $pullAll: { outbox: done } } as Document);
    // Clears the flag only when no event arrived meanwhile; otherwise just releases the lease.
    const cleared = await col.updateOne(
      { _id: doc._id, outbox: { $size: 0 }, outbox_lease_owner: this.owner },
      { $set: { outbox_pending: false }, $unset: { outbox_lease: '', outbox_lease_owner: '' } } as Document,
    );
    if (cleared.matchedCount === 0) {
      await col.updateOne(
        { _id: doc._id, outbox_lease_owner: this.owner },
        { $unset: { outbox_lease: '', outbox_lease_owner: '' } } as Document,
      );
    }
    if (failure) {
      if (!this.failing) {
        this.failing = true;
        this.log.warn(
          { err: failure, collection: name, pending: events.length - done.length },
          'outbox publish failed; events kept and retried on later passes',
        );
      } else {
        this.log.debug({ err: failure, collection: name }, 'outbox publish still failing');
      }
      return { ok: false, published: done.length };
    }
    return { ok: true, published: done.length };
  }
}
