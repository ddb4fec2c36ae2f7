// Outbox marks: the relay's progress kept per time slot of a writer instead of per
// document, so a write's events cost the store nothing after the write itself.
//
// A write that stores events takes its process's current mark for the collection
// (`<writer>:<n>`, one every MARK_SLOT_MS) and stores it with the events
// (`outbox_mark`, `outbox_events`: outbox/fields.ts). A mark's marker document in
// `outbox_marks` is stored before the first write that carries it, and deleted once
// its slot is over and every event its writes stored has been published (from
// memory, with publisher confirms, retried until they go out). So a marker that is
// still there long after its slot names the documents whose events may not have
// gone out: its writer died, or cannot publish. Any relay then reads those documents
// by the mark (an equality the local store's index serves), publishes their events
// and deletes the marker (sweepDead); consumers dedupe by event id. The documents'
// events stay in them, unread, until a later write replaces them: a write may replace
// them only once they are known published (settled), and otherwise writes the
// per-document outbox the drain clears (relay.ts).
//
// A write that failed without the store's answer may have landed: its mark is
// settled from the store (its documents read back, the events not published from
// memory published) before the marker goes. Costs: a marker insert and delete per
// collection and slot; nothing per write. The same code runs on MongoDB.
import { randomUUID } from 'node:crypto';
import { ROOT_CONTEXT, context } from '@opentelemetry/api';
import type { Collection, Db } from 'mongodb';
import { backoffDelayMs } from '../backoff.ts';
import type { DomainEvent } from '../events.ts';
import type { Logger } from '../logger.ts';
import { SWEEP } from '../store/time-budgets.ts';
import { extractTraceContext } from '../telemetry.ts';
import { docKey, type EventPublisher } from './drain.ts';
import type { MarkedWrites, MarkTicket } from './marked-writes.ts';

export const OUTBOX_MARKS = 'outbox_marks';
/** How long the writes of a process share one mark. */
export const MARK_SLOT_MS = 5_000;
/**
 * A marker still there this long after its slot ended is swept by any relay. A write
 * is sent within moments of taking its mark and the store gives up on it within its
 * budget (5 s), so no write lands under a mark this late.
 */
export const MARK_SWEEP_AFTER_MS = 60_000;
/** A write that failed without the store's answer may land within the store's budget: its mark is settled from the store after this. */
const UNCERTAIN_MS = 10_000;
/** Events published from memory wait for the broker at most this many: past it, writes use the per-document outbox, which waits in the store. */
const MAX_WAITING_EVENTS = 10_000;
/** A marker delete (or settlement) that failed is tried again after this. */
const CLOSE_RETRY_MS = 2_000;
/** Foreign marks known closed, kept for writes that replace their events. */
const CLOSED_KEPT = 10_000;

interface MarkerDoc {
  _id: string;
  collection: string;
  /** When its slot ends: a sweep leaves it alone until MARK_SWEEP_AFTER_MS after. */
  until: Date;
}

class Mark {
  state: 'opening' | 'open' | 'closing' | 'closed' | 'failed' = 'opening';
  /** Writes that took it and are not settled. */
  writes = 0;
  /** Events its writes stored that are not published yet. */
  waiting = 0;
  /** When a write under it last failed without an answer (0: none). */
  uncertainAt = 0;
  /** Events published under it, left out when it is settled from the store. */
  readonly sent = new Set<string>();
  /** Documents whose write failed: owed (settled) until the mark closes. */
  readonly owedDocs: string[] = [];
  timer: NodeJS.Timeout | undefined;
  opened: Promise<void> = Promise.resolve();
  readonly id: string;
  readonly collection: string;
  readonly until: number;

  constructor(id: string, collection: string, until: number) {
    this.id = id;
    this.collection = collection;
    this.until = until;
  }

  usable(now: number): boolean {
    return (this.state === 'opening' || this.state === 'open') && now < this.until;
  }
}

export interface OutboxMarksOptions {
  db: Db;
  /** The collections this relay sweeps. */
  collections: string[];
  publisher: EventPublisher;
  /** Runs `publish` after the document's earlier publishes (the relay keeps one order per document); resolves or rejects with it. */
  inOrder(collection: string, id: string, publish: () => Promise<void>): Promise<void>;
  /** A publish failed (it is tried again). */
  failed(err: unknown, collection: string): void;
  logger: Logger;
}

export class OutboxMarks implements MarkedWrites {
  private readonly opts: OutboxMarksOptions;
  private readonly markers: Collection<MarkerDoc>;
  private readonly writer = randomUUID();
  private seq = 0;
  /** Per collection, the mark writes take now and the one opened ahead for the next slot. */
  private readonly slots = new Map<string, { current: Mark | null; next: Mark | null }>();
  /** This process's marks not closed yet, by id. */
  private readonly open = new Map<string, Mark>();
  /** Per document (docKey), this process's writes whose events are not published yet. */
  private readonly owed = new Map<string, number>();
  /** Other writers' marks seen closed (in insertion order, the oldest dropped first). */
  private readonly closedMarks = new Set<string>();
  private waitingEvents = 0;
  /** Per collection, the events waiting for the broker, by id, with when each was created (ms): in write order. */
  private readonly waitingByCollection = new Map<string, Map<string, number>>();
  private halted = false;
  /** Wakes the publishes waiting to try again (on halt). */
  private readonly wakes = new Set<() => void>();

  constructor(opts: OutboxMarksOptions) {
    this.opts = opts;
    this.markers = opts.db.collection<MarkerDoc>(OUTBOX_MARKS);
  }

  async take(collection: string, id: string): Promise<MarkTicket | null> {
    if (this.halted || this.waitingEvents >= MAX_WAITING_EVENTS) return null;
    const mark = this.current(collection);
    const key = docKey(collection, id);
    mark.writes++;
    this.owe(key, 1);
    try {
      await mark.opened;
    } catch (err) {
      mark.writes--;
      this.owe(key, -1);
      throw err;
    }
    let settled = false;
    const settle = () => {
      if (settled) throw new Error(`mark ${mark.id}: a write settled twice`);
      settled = true;
      mark.writes--;
    };
    // What a write sets going is the relay's work: outside the writer's context (its trace, a request's counted commands).
    const detached = (fn: () => void) => context.with(ROOT_CONTEXT, fn);
    return {
      mark: mark.id,
      stored: (events) => {
        settle();
        detached(() => this.publish(mark, collection, id, events));
      },
      refused: () => {
        settle();
        this.owe(key, -1);
        detached(() => this.maybeClose(mark));
      },
      failed: () => {
        settle();
        mark.uncertainAt = Date.now();
        mark.owedDocs.push(key);
        detached(() => this.maybeClose(mark));
      },
    };
  }

  async settled(collection: string, id: string, mark: string | null): Promise<boolean> {
    if ((this.owed.get(docKey(collection, id)) ?? 0) > 0) return false;
    // Not owed: every event this process stored in the document is published.
    if (mark === null || this.isOwn(mark) || this.closedMarks.has(mark)) return true;
    if (await this.markers.findOne({ _id: mark }, { projection: { _id: 1 } })) return false;
    this.rememberClosed(mark);
    return true;
  }

  /**
   * Publishes the events of the documents under other writers' marks whose slot
   * ended more than `afterMs` ago ('all': every other writer's, however recent), and
   * deletes those markers. Resolves with the events published; rejects at the first
   * failure (the rest wait for the next sweep).
   */
  async sweepDead(afterMs: number | 'all' = MARK_SWEEP_AFTER_MS): Promise<number> {
    const now = Date.now();
    // Markers of marks open now, and of writers that died: a handful, read whole.
    const markers = await this.markers.find({}).toArray();
    let published = 0;
    for (const m of markers) {
      if (this.halted) break;
      if (this.isOwn(m._id) || !this.opts.collections.includes(m.collection)) continue;
      if (afterMs !== 'all' && m.until.getTime() + afterMs > now) continue;
      published += await this.settleFromStore(m.collection, m._id, new Set());
      await this.markers.deleteOne({ _id: m._id });
      this.rememberClosed(m._id);
    }
    return published;
  }

  /** Stops taking marks and trying publishes again: what is not published waits for a sweep. */
  halt(): void {
    this.halted = true;
    for (const wake of this.wakes) wake();
  }

  /** Takes marks again after a halt (a relay started again). */
  resume(): void {
    this.halted = false;
  }

  /** On stop, after the publishes in flight ended: deletes the markers of marks whose events all went out. */
  async closeIdle(): Promise<void> {
    const now = Date.now();
    const idle = [...this.open.values()].filter(
      (m) =>
        m.state === 'open' &&
        m.writes === 0 &&
        m.waiting === 0 &&
        (!m.uncertainAt || now >= m.uncertainAt + UNCERTAIN_MS),
    );
    for (const mark of this.open.values()) clearTimeout(mark.timer);
    await Promise.all(idle.map((m) => this.close(m)));
  }

  /** Events stored under this process's marks and not published yet. */
  get waiting(): number {
    return this.waitingEvents;
  }

  /** Of one collection: how many events wait for the broker, and when the oldest was created (ms; null: none). */
  waitingIn(collection: string): { events: number; oldestAt: number | null } {
    const waiting = this.waitingByCollection.get(collection);
    const first = waiting?.values().next();
    return { events: waiting?.size ?? 0, oldestAt: first && !first.done ? first.value : null };
  }

  private isOwn(mark: string): boolean {
    return mark.startsWith(`${this.writer}:`);
  }

  private rememberClosed(mark: string): void {
    this.closedMarks.add(mark);
    if (this.closedMarks.size > CLOSED_KEPT) this.closedMarks.delete(this.closedMarks.values().next().value!);
  }

  private owe(key: string, n: number): void {
    const left = (this.owed.get(key) ?? 0) + n;
    if (left > 0) this.owed.set(key, left);
    else this.owed.delete(key);
  }

  /** The collection's mark for a write now; the next one is opened ahead in the second half of a slot. */
  private current(collection: string): Mark {
    const now = Date.now();
    let slots = this.slots.get(collection);
    if (!slots) this.slots.set(collection, (slots = { current: null, next: null }));
    if (!slots.current?.usable(now)) {
      const next = slots.next?.usable(now) ? slots.next : null;
      slots.current = next ?? this.openMark(collection, now + MARK_SLOT_MS);
      slots.next = null;
    }
    const current = slots.current;
    if (!slots.next && now > current.until - MARK_SLOT_MS / 2)
      slots.next = this.openMark(collection, current.until + MARK_SLOT_MS);
    return current;
  }

  private openMark(collection: string, until: number): Mark {
    const mark = new Mark(`${this.writer}:${++this.seq}`, collection, until);
    this.open.set(mark.id, mark);
    mark.opened = context
      .with(ROOT_CONTEXT, () => this.markers.insertOne({ _id: mark.id, collection, until: new Date(until) }))
      .then(
        () => {
          mark.state = 'open';
          this.maybeClose(mark);
        },
        (err: unknown) => {
          // Its writes fail (503); one that landed regardless leaves a marker a sweep deletes.
          mark.state = 'failed';
          this.open.delete(mark.id);
          throw err;
        },
      );
    mark.opened.catch(() => {}); // a mark opened ahead that no write took
    return mark;
  }

  private publish(mark: Mark, collection: string, id: string, events: DomainEvent[]): void {
    const key = docKey(collection, id);
    mark.waiting += events.length;
    this.waitingEvents += events.length;
    let waiting = this.waitingByCollection.get(collection);
    if (!waiting) this.waitingByCollection.set(collection, (waiting = new Map<string, number>()));
    for (const event of events) waiting.set(event.id, Date.parse(event.created_at));
    this.opts
      .inOrder(collection, id, async () => {
        for (const event of events) {
          await this.publishOne(event, collection);
          mark.sent.add(event.id);
          mark.waiting--;
          this.waitingEvents--;
          waiting.delete(event.id);
        }
      })
      .then(
        () => {
          this.owe(key, -1);
          this.maybeClose(mark);
        },
        () => {}, // halted: the mark stays open, and a sweep publishes its documents' events
      );
  }

  /** Publishes until the broker confirms; rejects once halted. */
  private async publishOne(event: DomainEvent, collection: string): Promise<void> {
    for (let failures = 0; ; failures++) {
      try {
        // Published in the trace of the request that wrote the event.
        await context.with(extractTraceContext(event.trace), () => this.opts.publisher.publish(event));
        return;
      } catch (err) {
        if (this.halted) throw err;
        this.opts.failed(err, collection);
        await this.pause(backoffDelayMs(failures, { firstMs: 100, maxMs: 5000, jitter: 0.2 }));
        if (this.halted) throw err;
      }
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.wakes.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.wakes.add(wake);
    });
  }

  /** Closes the mark once its slot is over and nothing of its writes is in flight. */
  private maybeClose(mark: Mark): void {
    if (mark.state !== 'open' || mark.writes > 0 || mark.waiting > 0 || this.halted) return;
    const at = Math.max(mark.until, mark.uncertainAt ? mark.uncertainAt + UNCERTAIN_MS : 0);
    if (Date.now() < at) return this.closeAt(mark, at);
    void this.close(mark);
  }

  private closeAt(mark: Mark, at: number): void {
    clearTimeout(mark.timer);
    mark.timer = setTimeout(() => this.maybeClose(mark), Math.max(0, at - Date.now()));
    mark.timer.unref();
  }

  private async close(mark: Mark): Promise<void> {
    mark.state = 'closing';
    clearTimeout(mark.timer);
    try {
      if (mark.uncertainAt) await this.settleFromStore(mark.collection, mark.id, mark.sent);
      await this.markers.deleteOne({ _id: mark.id });
    } catch (err) {
      this.opts.logger.warn(
        { err, collection: mark.collection, mark: mark.id },
        'outbox mark not closed; tried again shortly',
      );
      mark.state = 'open';
      if (!this.halted) this.closeAt(mark, Date.now() + CLOSE_RETRY_MS);
      return;
    }
    mark.state = 'closed';
    this.open.delete(mark.id);
    for (const key of mark.owedDocs) this.owe(key, -1);
  }

  /** Publishes, document by document in order, the events stored under `mark` but those in `skip`; resolves with how many. */
  private async settleFromStore(collection: string, mark: string, skip: Set<string>): Promise<number> {
    const docs = await this.opts.db
      .collection<{ _id: string; outbox_events?: string }>(collection)
      .find({ outbox_mark: mark }, { projection: { outbox_events: 1 }, ...SWEEP })
      .toArray();
    let published = 0;
    for (const doc of docs) {
      const events = (JSON.parse(doc.outbox_events ?? '[]') as DomainEvent[]).filter((e) => !skip.has(e.id));
      if (events.length === 0) continue;
      await this.opts.inOrder(collection, doc._id, async () => {
        for (const event of events)
          await context.with(extractTraceContext(event.trace), () => this.opts.publisher.publish(event));
      });
      published += events.length;
    }
    return published;
  }
}
