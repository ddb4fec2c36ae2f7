// Transactional outbox without multi-document transactions: a record carries its
// pending events in its own `outbox` array, written by the same single-document
// write as the change. A relay publishes them and removes exactly what it published.
//
// Guarantees: nothing is lost if the process or the broker dies at any point;
// duplicates only when the process dies between a confirmed publish and the
// $pullAll (consumers dedupe by event id). Events of one document go out in order;
// there is no order between documents.
//
// Why leases live in their own collection: FerretDB 1.24 runs every update and
// findAndModify as "read, apply in Go, UPDATE ... WHERE _id = ?" with no isolation,
// so a lease taken with findOneAndUpdate is not exclusive (two relays both win, and
// our test saw events published twice), and two concurrent updates of one document
// can silently lose one of them. A unique-_id insert is atomic there, so leases and
// locks are inserts into `outbox_leases`. One document lock serializes everything
// that changes a record: writers take it for their read-modify-write, the relay for
// its whole drain (read, publish, $pullAll), so nothing undoes anything else.
import { randomUUID } from 'node:crypto';
import { context } from '@opentelemetry/api';
import type { Collection, Db, Document } from 'mongodb';
import { serviceUnavailable } from './errors.ts';
import type { DomainEvent } from './events.ts';
import type { Logger } from './broker.ts';
import { extractTraceContext } from './telemetry.ts';

export const OUTBOX_LEASES = 'outbox_leases';

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

/** Indexes the relay's queries use: outbox_pending on each collection, expiry on the leases. */
export async function createOutboxIndexes(db: Db, collections: string[]): Promise<void> {
  for (const name of collections) await db.collection(name).createIndex({ outbox_pending: 1 });
  await db.collection(OUTBOX_LEASES).createIndex({ expires_at: 1 });
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

interface LeaseDoc {
  _id: string;
  owner: string;
  expires_at: Date;
}

interface Lease {
  ids: string[];
  acquiredAt: number;
}

/**
 * Leases are time slots: an insert of `<key>:<slot>` and `<key>:<slot+1>` (slot =
 * now / periodMs) succeeds for one holder only, and holding both covers at least
 * periodMs from now. Expired slots are never reused, so no update is needed.
 * Resolves null when someone else holds the key.
 */
async function tryLease(leases: Collection<LeaseDoc>, key: string, periodMs: number, owner: string): Promise<Lease | null> {
  const acquiredAt = Date.now();
  const slot = Math.floor(acquiredAt / periodMs);
  const ids: string[] = [];
  for (const s of [slot, slot + 1]) {
    try {
      await leases.insertOne({ _id: `${key}:${s}`, owner, expires_at: new Date((s + 1) * periodMs) });
      ids.push(`${key}:${s}`);
    } catch (err) {
      if (ids.length) await leases.deleteMany({ _id: { $in: ids } }).catch(() => {});
      if ((err as { code?: number }).code === 11000) return null;
      throw new Error(`lease ${key} failed`, { cause: err });
    }
  }
  return { ids, acquiredAt };
}

async function releaseLease(leases: Collection<LeaseDoc>, lease: Lease): Promise<void> {
  await leases.deleteMany({ _id: { $in: lease.ids } });
}

/**
 * A document lock is exclusive for at least this long; its holder must be done
 * within it, and one that dies blocks the document for at most twice as long.
 * Every holder uses this one period (locks are time-slot keys). Replica clocks
 * must agree to well within it.
 */
export const DOCUMENT_LOCK_MS = 5000;

export interface DocumentLockOptions {
  /** Give up (reject) after waiting this long for the lock. Default 5000. */
  waitMs?: number;
}

const lockKey = (collection: string, id: unknown) => `lock:${collection}:${String(id)}`;
const LEASE_SWEEP_MS = 30_000;

/**
 * Runs fn while holding a short exclusive lock on one document, so that writes to
 * it through this function never overwrite each other on FerretDB (see the note at
 * the top). A holder that dies blocks the document for at most 2 × lockMs.
 */
export async function withDocumentLock<T>(
  db: Db,
  collection: string,
  id: unknown,
  fn: () => Promise<T>,
  opts: DocumentLockOptions = {},
): Promise<T> {
  const lockMs = DOCUMENT_LOCK_MS;
  const waitMs = opts.waitMs ?? 5000;
  const leases = db.collection<LeaseDoc>(OUTBOX_LEASES);
  const key = lockKey(collection, id);
  const owner = randomUUID();
  const deadline = Date.now() + waitMs;
  let lease = await tryLease(leases, key, lockMs, owner);
  for (let n = 0; !lease; n++) {
    if (Date.now() > deadline) {
      throw serviceUnavailable('The record is busy; retry', { cause: new Error(`document lock ${key} not acquired within ${waitMs} ms`) });
    }
    await new Promise((r) => setTimeout(r, Math.min(50, 2 + n * 2) * (0.5 + Math.random())));
    lease = await tryLease(leases, key, lockMs, owner);
  }
  try {
    return await fn();
  } finally {
    await releaseLease(leases, lease).catch(() => {}); // expires by itself otherwise
  }
}

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
  private readonly leases: Collection<LeaseDoc>;
  private readonly owner = randomUUID();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;
  private again = false;
  private started = false;
  private stopping = false;
  private failing = false;
  private lastLeaseSweep = 0;
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
    this.leases = this.db.collection<LeaseDoc>(OUTBOX_LEASES);
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
   * lease, its events in order); those not reached while publishing fails stay
   * named for the next pass.
   */
  private async drainHinted(): Promise<{ ok: boolean; published: number }> {
    const hinted = this.hints;
    this.hints = new Map();
    const work = [...hinted].flatMap(([name, ids]) => [...ids].map((id) => ({ name, id })));
    let published = 0;
    let ok = true;
    await forEachConcurrently(work, this.concurrency, async ({ name, id }) => {
      if (!ok || this.stopping) return this.hint(name, id);
      const result = await this.drainOne(name, this.db.collection<OutboxDoc>(name), id);
      published += result.published;
      if (!result.ok) ok = false;
      // Locked by a writer for a moment, or its publish failed: try again next pass.
      if (!result.ok || !result.claimed) this.hint(name, id);
    });
    return { ok, published };
  }

  private async pass(fullScan: boolean): Promise<number> {
    await this.sweepLeases();
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
      // Rounds until a batch yields nothing this relay could take (all drained or leased by others).
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
    const lease = await tryLease(this.leases, lockKey(name, id), DOCUMENT_LOCK_MS, this.owner);
    if (!lease) return { ok: true, claimed: false, published: 0 };
    const within = (fraction: number) => Date.now() - lease.acquiredAt < DOCUMENT_LOCK_MS * fraction;
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
      await releaseLease(this.leases, lease).catch((err) => {
        this.log.warn({ err, key: lease.ids[0] }, 'outbox lock release failed; it expires by itself');
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

  /** Drops leases left by relays that died (at most once per lease period). */
  private async sweepLeases(): Promise<void> {
    const now = Date.now();
    if (now - this.lastLeaseSweep < LEASE_SWEEP_MS) return;
    this.lastLeaseSweep = now;
    await this.leases.deleteMany({ expires_at: { $lt: new Date(now - DOCUMENT_LOCK_MS) } });
  }
}
