// The outbox relay: publishes the events records carry, under a mark of their
// writer's time slot (marks.ts: nothing to remove afterwards), or in their `outbox`
// array (outbox/fields.ts), from which it removes exactly what it published.
//
// The write that stored events hands them over (`kick` with the events): they are
// published at once from memory (publisher confirms), then a drain pass removes
// them from their documents, a batch at a time (drain.ts). Events no live process
// holds (a publish that failed, a process that died) are published by
// the drain: of the documents kicks named, and, every scanIntervalMs, of any
// document still flagged `outbox_pending` a while after its last event was written.
//
// Events under a mark are published from memory too, tried again until the broker
// confirms them; those of a writer that died are published by a sweep of its marks
// (OutboxMarks.sweepDead, with the scan).
//
// Guarantees: nothing is lost if the process or the broker dies at any point;
// duplicates only when a process dies between a confirmed publish and the
// removal (consumers dedupe by event id). Events of one document go out in order;
// there is no order between documents. The drain works under the documents' locks,
// the ones writers take for their read-modify-write, so nothing undoes anything
// else. What the memory path knows, which the drain reads, is kept in handed-over.ts.
import { ROOT_CONTEXT, context } from '@opentelemetry/api';
import type { Db } from 'mongodb';
import type { DomainEvent } from '../events.ts';
import type { Logger } from '../logger.ts';
import { sweepExpiredLocks } from '../store/lock.ts';
import { extractTraceContext } from '../telemetry.ts';
import { OutboxDrain, docKey, type Drained, type EventPublisher } from './drain.ts';
import { HandedOver } from './handed-over.ts';
import { MARK_SWEEP_AFTER_MS, OutboxMarks } from './marks.ts';

export type { EventPublisher } from './drain.ts';

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
  /** A scheduled scan publishes the events under another writer's mark this long after the mark's slot ended. Default MARK_SWEEP_AFTER_MS. */
  markSweepAfterMs?: number;
}

const LOCK_SWEEP_MS = 30_000;

function chunks<T>(items: T[], size: number): T[][] {
  return Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));
}

export class OutboxRelay {
  private readonly db: Db;
  private readonly collections: string[];
  private readonly publisher: EventPublisher;
  private readonly log: Logger;
  private readonly intervalMs: number;
  private readonly batchSize: number;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;
  private again = false;
  private started = false;
  private stopping = false;
  private failing = false;
  private lastLockSweep = 0;
  private readonly scanIntervalMs: number;
  private readonly drain: OutboxDrain;
  private readonly scanGraceMs: number;
  private lastScan = 0;
  private hints = new Map<string, Set<string>>();
  private readonly memory: HandedOver;
  /** Per document, its publish from memory in flight (one at a time, in write order). */
  private readonly chains = new Map<string, Promise<void>>();
  /** The marks writes take instead of a per-document outbox (marks.ts). */
  readonly marks: OutboxMarks;
  private readonly markSweepAfterMs: number;

  constructor(opts: OutboxRelayOptions) {
    this.db = opts.db;
    this.collections = opts.collections;
    this.publisher = opts.publisher;
    this.log = opts.logger;
    this.intervalMs = opts.intervalMs ?? 1000;
    this.batchSize = opts.batchSize ?? 100;
    this.scanIntervalMs = opts.scanIntervalMs ?? 30_000;
    this.scanGraceMs = opts.scanGraceMs ?? 10_000;
    this.memory = new HandedOver(this.scanGraceMs);
    this.markSweepAfterMs = opts.markSweepAfterMs ?? MARK_SWEEP_AFTER_MS;
    this.marks = new OutboxMarks({
      db: this.db,
      collections: this.collections,
      publisher: this.publisher,
      logger: this.log,
      inOrder: (collection, id, publish) => this.inOrder(docKey(collection, id), publish),
      failed: (err, collection) => this.noteFailure(err, collection, this.marks.waiting),
    });
    this.drain = new OutboxDrain({
      db: this.db,
      publisher: this.publisher,
      memory: this.memory,
      concurrency: opts.concurrency ?? 16,
      stopping: () => this.stopping,
      failed: (err, collection, pending) => this.noteFailure(err, collection, pending),
      releaseFailed: (err, collection) =>
        this.log.warn({ err, collection }, 'outbox lock release failed; the locks expire by themselves'),
    });
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.stopping = false;
    this.marks.resume();
    this.schedule(0);
  }

  /**
   * Call right after a write that stored events in a document, while it still
   * holds the document's lock, with those events: they are published at once and
   * removed from the document by the next pass. Without events, runs a pass soon
   * that drains the document by id.
   */
  kick(collection?: string, id?: string, events: DomainEvent[] = []): void {
    // What a kick sets going is the relay's work, not the writer's: it runs outside the
    // writer's context (its trace, a request's counted commands: counted-requests.ts).
    context.with(ROOT_CONTEXT, () => {
      if (collection !== undefined && id !== undefined) {
        const key = docKey(collection, id);
        this.memory.written(key, events);
        if (this.started && events.length > 0 && !this.memory.isBlocked(key)) this.publishNow(collection, id, events);
        else this.hint(collection, id);
      }
      this.soon();
    });
  }

  /**
   * Stops scheduling, lets the publishes from memory end and the pass in flight
   * stop after its current document, then drains what kicks named in one last pass.
   */
  async stop(): Promise<void> {
    this.started = false;
    this.stopping = true;
    this.marks.halt();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    while (this.chains.size > 0) await Promise.all(this.chains.values());
    await this.marks.closeIdle();
    await this.running?.catch(() => {});
    this.stopping = false;
    await this.run(false).catch((err: unknown) =>
      this.log.warn({ err }, 'outbox: the last pass failed; its events go out again later'),
    );
  }

  /**
   * One pass over every collection (after any pass in flight), publishing every
   * pending event however recent, those under other writers' marks included;
   * resolves with the number of events published.
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
  private publishNow(collection: string, id: string, events: DomainEvent[]): void {
    const key = docKey(collection, id);
    this.memory.announce(events);
    void this.inOrder(key, async () => {
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
  }

  /** Runs `publish` after the document's earlier publishes from memory; resolves or rejects with it. */
  private inOrder(key: string, publish: () => Promise<void>): Promise<void> {
    const previous = this.chains.get(key) ?? Promise.resolve();
    const result = previous.then(publish);
    const chain = result.catch(() => {});
    this.chains.set(key, chain);
    void chain.finally(() => {
      if (this.chains.get(key) === chain) this.chains.delete(key);
    });
    return result;
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
        .catch((err: unknown) => this.log.error({ err }, 'outbox pass failed'))
        .finally(() => {
          const again = this.again;
          this.again = false;
          this.schedule(again ? 0 : this.intervalMs);
        });
    }, delayMs);
  }

  private hint(collection: string, id: string): void {
    let ids = this.hints.get(collection);
    if (!ids) this.hints.set(collection, (ids = new Set()));
    ids.add(id);
  }

  /**
   * Drains the documents named by kicks, batchSize at a time (a batch under its
   * documents' locks); those not reached while publishing or the store fails stay
   * named for the next pass.
   */
  private async drainHinted(): Promise<{ ok: boolean; published: number }> {
    const hinted = this.hints;
    this.hints = new Map();
    const batches = [...hinted].flatMap(([name, ids]) =>
      chunks([...ids], this.batchSize).map((batch) => ({ name, batch })),
    );
    const nameAgain = (from: number) => {
      for (const { name, batch } of batches.slice(from)) for (const id of batch) this.hint(name, id);
    };
    let published = 0;
    for (const [n, { name, batch }] of batches.entries()) {
      if (this.stopping) {
        nameAgain(n);
        break;
      }
      let result: Drained;
      try {
        result = await this.drain.batch(name, batch);
      } catch (err) {
        nameAgain(n);
        throw err;
      }
      published += result.published;
      // Locked by a writer for a moment, left to memory, or its publish failed: try again next pass.
      for (const id of result.again) this.hint(name, id);
      if (!result.ok) {
        nameAgain(n + 1);
        return { ok: false, published };
      }
    }
    return { ok: true, published };
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
      published += await this.marks.sweepDead(graceMs === 0 ? 'all' : this.markSweepAfterMs).catch((err: unknown) => {
        this.log.warn({ err }, "outbox: the sweep of dead writers' marks failed; tried again at the next scan");
        return 0;
      });
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
      const col = this.db.collection<{ _id: string; outbox_pending?: boolean }>(name);
      // Rounds until a batch yields nothing this relay could take (all drained or locked by others).
      for (let round = 0; round < 50; round++) {
        const found = await col
          .find({ outbox_pending: true }, { projection: { _id: 1 } })
          .limit(this.batchSize)
          .toArray();
        if (this.stopping) return published;
        const result = await this.drain.batch(
          name,
          found.map((d) => d._id),
          graceMs,
        );
        published += result.published;
        if (!result.ok || this.stopping) return published;
        if (result.again.length === found.length || found.length < this.batchSize) break;
      }
    }
    return published;
  }

  /** Drops locks left by holders that died, every LOCK_SWEEP_MS at most. */
  private async sweepLocks(): Promise<void> {
    const now = Date.now();
    if (now - this.lastLockSweep < LOCK_SWEEP_MS) return;
    this.lastLockSweep = now;
    await sweepExpiredLocks(this.db);
  }
}
