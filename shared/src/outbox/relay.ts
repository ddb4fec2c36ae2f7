// The outbox relay: publishes the events records carry in their `outbox` array
// (outbox/fields.ts) and removes exactly what it published.
//
// Guarantees: nothing is lost if the process or the broker dies at any point;
// duplicates only when the process dies between a confirmed publish and the
// $pullAll (consumers dedupe by event id). Events of one document go out in order;
// there is no order between documents. The relay drains a document under its
// document lock (store/lock.ts), the one writers take for their read-modify-write,
// so nothing undoes anything else.
import { randomUUID } from 'node:crypto';
import { context } from '@opentelemetry/api';
import type { Collection, Db, Document } from 'mongodb';
import type { DomainEvent } from '../events.ts';
import type { Logger } from '../logger.ts';
import { DOCUMENT_LOCK_MS, sweepExpiredLocks, tryDocumentLock } from '../store/lock.ts';
import { extractTraceContext } from '../telemetry.ts';

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
  /** Documents looked at per query. Default 100. */
  batchSize?: number;
  /** Documents drained at the same time. Default 16. */
  concurrency?: number;
  /**
   * How often a pass also scans the collections for pending events that no kick
   * named (written by a process that died before relaying them). Scans cost a
   * collection scan on FerretDB, so they are rare. Default 30000.
   */
  scanIntervalMs?: number;
}

interface OutboxDoc {
  _id: any;
  outbox?: DomainEvent[];
  outbox_pending?: boolean;
}

const LOCK_SWEEP_MS = 30_000;

async function forEachConcurrently<T>(items: T[], limit: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

export class OutboxRelay {
  private readonly db: Db;
  private readonly collections: string[];
  private readonly publisher: EventPublisher;
  private readonly log: Logger;
  private readonly intervalMs: number;
  private readonly batchSize: number;
  private readonly owner = randomUUID();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;
  private again = false;
  private started = false;
  private stopping = false;
  private failing = false;
  private lastLockSweep = 0;
  private readonly scanIntervalMs: number;
  private readonly concurrency: number;
  private lastScan = 0;
  private hints = new Map<string, Set<unknown>>();

  constructor(opts: OutboxRelayOptions) {
    this.db = opts.db;
    this.collections = opts.collections;
    this.publisher = opts.publisher;
    this.log = opts.logger;
    this.intervalMs = opts.intervalMs ?? 1000;
    this.batchSize = opts.batchSize ?? 100;
    this.scanIntervalMs = opts.scanIntervalMs ?? 30_000;
    this.concurrency = opts.concurrency ?? 16;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.stopping = false;
    this.schedule(0);
  }

  /**
   * Runs a pass soon; call right after a write that queued events, naming the
   * document so the pass drains it by id instead of scanning for it.
   */
  kick(collection?: string, id?: unknown): void {
    if (collection !== undefined && id !== undefined) this.hint(collection, id);
    if (!this.started) return;
    if (this.running) this.again = true;
    else this.schedule(0);
  }

  /** Stops scheduling and waits for the pass in flight (which stops after its current document). */
  async stop(): Promise<void> {
    this.started = false;
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running?.catch(() => {});
    this.stopping = false;
  }

  /**
   * One pass over every collection (after any pass in flight); resolves with the
   * number of events published. A pass stops at the first publish failure.
   */
  async runOnce(): Promise<number> {
    return this.run(true);
  }

  private async run(fullScan: boolean): Promise<number> {
    while (this.running) await this.running.catch(() => {});
    const p = this.pass(fullScan).finally(() => {
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
      void this.run(Date.now() - this.lastScan >= this.scanIntervalMs)
        .catch((err) => this.log.error({ err }, 'outbox pass failed'))
        .finally(() => {
          const again = this.again;
          this.again = false;
          this.schedule(again ? 0 : this.intervalMs);
        });
    }, delayMs);
  }

  private hint(collection: string, id: unknown): void {
    let ids = this.hints.get(collection);
    if (!ids) this.hints.set(collection, (ids = new Set()));
    ids.add(id);
  }

  /**
   * Drains the documents named by kicks, several at a time (each under its own
   * lock, its events in order); those not reached while publishing or the store
   * fails stay named for the next pass.
   */
  private async drainHinted(): Promise<{ ok: boolean; published: number }> {
    const hinted = this.hints;
    this.hints = new Map();
    const work = [...hinted].flatMap(([name, ids]) => [...ids].map((id) => ({ name, id })));
    let published = 0;
    let ok = true;
    let storeFailure: unknown = null;
    await forEachConcurrently(work, this.concurrency, async ({ name, id }) => {
      if (!ok || this.stopping) return this.hint(name, id);
      try {
        const result = await this.drainOne(name, this.db.collection<OutboxDoc>(name), id);
        published += result.published;
        if (!result.ok) ok = false;
        // Locked by a writer for a moment, or its publish failed: try again next pass.
        if (!result.ok || !result.claimed) this.hint(name, id);
      } catch (err) {
        // The store failed: this document and every one not reached stay named.
        ok = false;
        storeFailure ??= err;
        this.hint(name, id);
      }
    });
    if (storeFailure) throw storeFailure;
    return { ok, published };
  }

  private async pass(fullScan: boolean): Promise<number> {
    await this.sweepLocks();
    const hinted = await this.drainHinted();
    let published = hinted.published;
    if (!hinted.ok) return published;
    if (fullScan) {
      this.lastScan = Date.now();
      published += await this.scan();
    }
    if (this.failing && published > 0) {
      this.failing = false;
      this.log.info({}, 'outbox publishing resumed');
    }
    return published;
  }

  private async scan(): Promise<number> {
    let published = 0;
    for (const name of this.collections) {
      const col = this.db.collection<OutboxDoc>(name);
      // Rounds until a batch yields nothing this relay could take (all drained or locked by others).
      for (let round = 0; round < 50; round++) {
        const batch = await col
          .find({ outbox_pending: true }, { projection: { _id: 1 } })
          .limit(this.batchSize)
          .toArray();
        let progressed = false;
        let ok = true;
        await forEachConcurrently(batch, this.concurrency, async ({ _id }) => {
          if (!ok || this.stopping) return;
          const result = await this.drainOne(name, col, _id);
          published += result.published;
          if (result.claimed) progressed = true;
          if (!result.ok) ok = false;
        });
        if (!ok || this.stopping) return published;
        if (!progressed || batch.length < this.batchSize) break;
      }
    }
    return published;
  }

  /**
   * Takes the document's lock (without waiting: a writer or another relay has it),
   * publishes its events in order and removes the published ones, all under the
   * lock. Publishing stops at half the lock period, and the removal is skipped
   * once the lock may have lapsed: those events go out again later (a duplicate)
   * rather than risk overwriting a writer's change.
   */
  private async drainOne(
    name: string,
    col: Collection<OutboxDoc>,
    id: OutboxDoc['_id'],
  ): Promise<{ ok: boolean; claimed: boolean; published: number }> {
    const lock = await tryDocumentLock(this.db, name, id, this.owner);
    if (!lock) return { ok: true, claimed: false, published: 0 };
    const within = (fraction: number) => Date.now() - lock.acquiredAt < DOCUMENT_LOCK_MS * fraction;
    try {
      const doc = await col.findOne({ _id: id });
      const events = doc?.outbox ?? [];
      if (!doc || !doc.outbox_pending) return { ok: true, claimed: true, published: 0 };
      const done: DomainEvent[] = [];
      let failure: unknown = null;
      for (const event of events) {
        if (!within(0.5)) break; // the rest go out after a later claim
        try {
          // Published in the trace of the request that wrote the event.
          await context.with(extractTraceContext(event.trace), () => this.publisher.publish(event));
          done.push(event);
        } catch (err) {
          failure = err;
          break;
        }
      }
      if (within(0.9)) await this.removePublished(col, id, events.length, done);
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
        return { ok: false, claimed: true, published: done.length };
      }
      return { ok: true, claimed: true, published: done.length };
    } finally {
      await lock.release().catch((err) => {
        this.log.warn({ err, collection: name, id }, 'outbox lock release failed; it expires by itself');
      });
    }
  }

  /**
   * Removes the published events (the sub-documents exactly as read: $pullAll
   * matches by value, and FerretDB ignores $pull with a condition). When they were
   * all there was, the same write clears the flag; the $size filter makes that
   * write miss if a writer appended an event meanwhile.
   */
  private async removePublished(col: Collection<OutboxDoc>, id: OutboxDoc['_id'], readCount: number, done: DomainEvent[]): Promise<void> {
    if (done.length === readCount) {
      const r = await col.updateOne(
        { _id: id, outbox: { $size: readCount } },
        { $pullAll: { outbox: done }, $set: { outbox_pending: false } } as Document,
      );
      if (r.matchedCount === 1) return;
    }
    if (done.length > 0) await col.updateOne({ _id: id }, { $pullAll: { outbox: done } } as Document);
  }

  /** Drops locks left by holders that died, every LOCK_SWEEP_MS at most. */
  private async sweepLocks(): Promise<void> {
    const now = Date.now();
    if (now - this.lastLockSweep < LOCK_SWEEP_MS) return;
    this.lastLockSweep = now;
    await sweepExpiredLocks(this.db);
  }
}
