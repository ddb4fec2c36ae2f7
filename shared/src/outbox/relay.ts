// The outbox relay: publishes the events records carry in their `outbox` array
// (outbox/fields.ts) and removes exactly what it published.
//
// The write that stored events hands them over (`kick` with the events): they are
// published at once from memory (publisher confirms), then a drain pass removes
// them from their document, many documents a pass. Events no live process holds
// (a publish that failed, a process that died) are published by the drain: of
// the documents kicks named, and, every scanIntervalMs, of any document still
// flagged `outbox_pending` a while after its last event was written.
//
// Guarantees: nothing is lost if the process or the broker dies at any point;
// duplicates only when a process dies between a confirmed publish and the
// $pullAll (consumers dedupe by event id). Events of one document go out in order;
// there is no order between documents. The relay drains a document under its
// document lock (store/lock.ts), the one writers take for their read-modify-write,
// so nothing undoes anything else. What the memory path knows, which the drain
// reads, is kept in handed-over.ts.
import { randomUUID } from 'node:crypto';
import { context } from '@opentelemetry/api';
import type { Collection, Db, Document } from 'mongodb';
import type { DomainEvent } from '../events.ts';
import type { Logger } from '../logger.ts';
import { DOCUMENT_LOCK_MS, sweepExpiredLocks, tryDocumentLock } from '../store/lock.ts';
import { extractTraceContext } from '../telemetry.ts';
import { HandedOver } from './handed-over.ts';

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
   * named (written by a process that died before relaying them). Default 30000.
   */
  scanIntervalMs?: number;
  /**
   * A scheduled scan leaves alone documents whose last event is younger than this:
   * the process that wrote it is publishing it. Default 10000.
   */
  scanGraceMs?: number;
}

interface OutboxDoc {
  _id: any;
  outbox?: DomainEvent[];
  outbox_pending?: boolean;
}

const LOCK_SWEEP_MS = 30_000;

const docKey = (collection: string, id: unknown) => `${collection}\u0000${String(id)}`;

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
  private readonly scanGraceMs: number;
  private lastScan = 0;
  private hints = new Map<string, Set<unknown>>();
  private readonly memory: HandedOver;
  /** Per document, its publish from memory in flight (one at a time, in write order). */
  private readonly chains = new Map<string, Promise<void>>();

  constructor(opts: OutboxRelayOptions) {
    this.db = opts.db;
    this.collections = opts.collections;
    this.publisher = opts.publisher;
    this.log = opts.logger;
    this.intervalMs = opts.intervalMs ?? 1000;
    this.batchSize = opts.batchSize ?? 100;
    this.scanIntervalMs = opts.scanIntervalMs ?? 30_000;
    this.scanGraceMs = opts.scanGraceMs ?? 10_000;
    this.concurrency = opts.concurrency ?? 16;
    this.memory = new HandedOver(this.scanGraceMs);
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.stopping = false;
    this.schedule(0);
  }

  /**
   * Call right after a write that stored events in a document, while it still
   * holds the document's lock, with those events: they are published at once and
   * removed from the document by the next pass. Without events, runs a pass soon
   * that drains the document by id.
   */
  kick(collection?: string, id?: unknown, events: DomainEvent[] = []): void {
    if (collection !== undefined && id !== undefined) {
      this.memory.written(events);
      if (this.started && events.length > 0 && !this.memory.isBlocked(docKey(collection, id))) this.publishNow(collection, id, events);
      else this.hint(collection, id);
    }
    this.soon();
  }

  /**
   * Stops scheduling, lets the publishes from memory end and the pass in flight
   * stop after its current document, then drains what kicks named in one last pass.
   */
  async stop(): Promise<void> {
    this.started = false;
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    while (this.chains.size > 0) await Promise.all(this.chains.values());
    await this.running?.catch(() => {});
    this.stopping = false;
    await this.run(false).catch((err) => this.log.warn({ err }, 'outbox: the last pass failed; its events go out again later'));
  }

  /**
   * One pass over every collection (after any pass in flight), publishing every
   * pending event however recent; resolves with the number of events published.
   * A pass stops at the first publish failure.
   */
  async runOnce(): Promise<number> {
    return this.run(true, 0);
  }

  private soon(): void {
    if (!this.started) return;
    if (this.running) this.again = true;
    else this.schedule(0);
  }

  /**
   * Publishes a write's events in order, after any earlier publish of the same
   * document; a failure leaves them, and the document's later events, to the drain.
   */
  private publishNow(collection: string, id: unknown, events: DomainEvent[]): void {
    const key = docKey(collection, id);
    this.memory.announce(events);
    const previous = this.chains.get(key) ?? Promise.resolve();
    const chain = previous.then(async () => {
      for (const [i, event] of events.entries()) {
        if (this.memory.isBlocked(key)) {
          this.memory.withdraw(events.slice(i));
          break;
        }
        try {
          // Published in the trace of the request that wrote the event.
          await context.with(extractTraceContext(event.trace), () => this.publisher.publish(event));
          this.memory.sent(event);
        } catch (err) {
          this.memory.failed(key, events.slice(i));
          this.noteFailure(err, collection, events.length - i);
        }
      }
      this.hint(collection, id);
      this.soon();
    });
    this.chains.set(key, chain);
    void chain.finally(() => {
      if (this.chains.get(key) === chain) this.chains.delete(key);
    });
  }

  private noteFailure(err: unknown, collection: string, pending: number): void {
    if (!this.failing) {
      this.failing = true;
      this.log.warn({ err, collection, pending }, 'outbox publish failed; events kept and retried on later passes');
    } else {
      this.log.debug({ err, collection }, 'outbox publish still failing');
    }
  }

  private async run(fullScan: boolean, graceMs = this.scanGraceMs): Promise<number> {
    while (this.running) await this.running.catch(() => {});
    const p = this.pass(fullScan, graceMs).finally(() => {
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

  private async pass(fullScan: boolean, graceMs: number): Promise<number> {
    this.memory.forgetOld();
    await this.sweepLocks();
    const hinted = await this.drainHinted();
    let published = hinted.published;
    if (!hinted.ok) return published;
    if (fullScan) {
      this.lastScan = Date.now();
      published += await this.scan(graceMs);
    }
    if (this.failing && published > 0) {
      this.failing = false;
      this.log.info({}, 'outbox publishing resumed');
    }
    return published;
  }

  private async scan(graceMs: number): Promise<number> {
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
          const result = await this.drainOne(name, col, _id, graceMs);
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
   * publishes its events in order (skipping those published from memory, stopping
   * at one still being published from memory) and removes the published ones, all
   * under the lock. Publishing stops at half the lock period, and the removal is
   * skipped once the lock may have lapsed: those events go out again later (a
   * duplicate) rather than risk overwriting a writer's change. With `graceMs`, a
   * document whose last event is younger is left to the process that wrote it.
   */
  private async drainOne(
    name: string,
    col: Collection<OutboxDoc>,
    id: OutboxDoc['_id'],
    graceMs = 0,
  ): Promise<{ ok: boolean; claimed: boolean; published: number }> {
    const lock = await tryDocumentLock(this.db, name, id, this.owner);
    if (!lock) return { ok: true, claimed: false, published: 0 };
    const within = (fraction: number) => Date.now() - lock.acquiredAt < DOCUMENT_LOCK_MS * fraction;
    const key = docKey(name, id);
    try {
      const doc = await col.findOne({ _id: id });
      const events = doc?.outbox ?? [];
      if (!doc || !doc.outbox_pending) return { ok: true, claimed: true, published: 0 };
      const last = events.at(-1);
      if (graceMs > 0 && last && Date.now() - Date.parse(last.created_at) < graceMs) return { ok: true, claimed: false, published: 0 };
      const done: DomainEvent[] = [];
      let published = 0;
      let failure: unknown = null;
      let waiting = false;
      for (const event of events) {
        if (this.memory.isSent(event)) {
          done.push(event);
          continue;
        }
        // Being published from memory, here or by the replica that wrote it (named again
        // below), or the lock is half gone: the rest go out later, in order.
        if ((waiting = this.memory.isSomeoneElses(event)) || !within(0.5)) break;
        try {
          await context.with(extractTraceContext(event.trace), () => this.publisher.publish(event));
          done.push(event);
          published++;
        } catch (err) {
          failure = err;
          break;
        }
      }
      if (within(0.9)) {
        await this.removePublished(col, id, events.length, done);
        this.memory.removed(key, done, done.length === events.length);
      }
      if (failure) {
        this.noteFailure(failure, name, events.length - done.length);
        return { ok: false, claimed: true, published };
      }
      return { ok: true, claimed: !waiting, published };
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
