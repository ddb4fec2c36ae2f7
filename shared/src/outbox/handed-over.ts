// What the outbox relay's memory path knows about events, which its drain reads
// before it publishes or removes anything (relay.ts): the events this process's
// writes handed over, those on their way out from memory, those already out, and
// the documents whose publish from memory failed.
import type { DomainEvent } from '../events.ts';

/** How long an event handed over or published is remembered when its document is never drained (deleted). */
const MEMORY_MS = 10 * 60_000;

export class HandedOver {
  private readonly graceMs: number;
  /** Ids of events handed over by a write and not yet published from memory. */
  private readonly announced = new Set<string>();
  /**
   * Ids of events handed over by this process's writes, with when. A young event
   * not among them was written by another replica, which publishes and removes it
   * itself.
   */
  private readonly mine = new Map<string, number>();
  /** Ids of events published from memory and not yet removed, with when: by event, not document, since an event may move (activities' tombstones). */
  private readonly published = new Map<string, number>();
  /** Documents whose publish from memory failed: their later events wait for the drain, so they go out in order. */
  private readonly blocked = new Set<string>();
  /** Per document, the events this process's writes stored in it and the drain has not removed yet, in write order, with when the last came. */
  private readonly perDoc = new Map<string, { events: DomainEvent[]; at: number }>();

  /** `graceMs`: how long another replica's event is left to that replica. */
  constructor(graceMs: number) {
    this.graceMs = graceMs;
  }

  /** A write of this process stored these events in the document. */
  written(doc: string, events: DomainEvent[]): void {
    for (const event of events) this.mine.set(event.id, Date.now());
    if (events.length === 0) return;
    const known = this.perDoc.get(doc);
    this.perDoc.delete(doc); // re-inserted last: the map stays in order of the last write
    this.perDoc.set(doc, { events: [...(known?.events ?? []), ...events], at: Date.now() });
  }

  /**
   * The events this process stored in the document and has not seen removed, when
   * every one of them is published: the document's whole outbox, unless another
   * process wrote to it too (which the drain's exact match then tells).
   */
  allSent(doc: string): DomainEvent[] | null {
    const known = this.perDoc.get(doc);
    return known && known.events.every((e) => this.published.has(e.id)) ? known.events : null;
  }

  /** Whether the document's events must wait for the drain (an earlier publish from memory failed). */
  isBlocked(doc: string): boolean {
    return this.blocked.has(doc);
  }

  /** These events are being published from memory. */
  announce(events: DomainEvent[]): void {
    for (const event of events) this.announced.add(event.id);
  }

  /** Published from memory: the drain only removes it. */
  sent(event: DomainEvent): void {
    this.published.set(event.id, Date.now());
    this.announced.delete(event.id);
  }

  /** The publish from memory failed at `rest[0]`: the document's events from there on are the drain's. */
  failed(doc: string, rest: DomainEvent[]): void {
    this.blocked.add(doc);
    this.withdraw(rest);
  }

  /** These will not be published from memory after all (the document was blocked meanwhile). */
  withdraw(rest: DomainEvent[]): void {
    for (const event of rest) this.announced.delete(event.id);
  }

  isSent(event: DomainEvent): boolean {
    return this.published.has(event.id);
  }

  /**
   * Whether the drain must leave this event (and the ones after it) for now: it is
   * being published from memory here, or another replica wrote it a moment ago and
   * is publishing it.
   */
  isSomeoneElses(event: DomainEvent): boolean {
    const othersYoung = !this.mine.has(event.id) && Date.now() - Date.parse(event.created_at) < this.graceMs;
    return this.announced.has(event.id) || othersYoung;
  }

  /** The drain removed these from the document; `all`: nothing of it is left. */
  removed(doc: string, events: DomainEvent[], all: boolean): void {
    for (const event of events) {
      this.published.delete(event.id);
      this.mine.delete(event.id);
    }
    if (all) this.blocked.delete(doc);
    const known = this.perDoc.get(doc);
    if (!known) return;
    const gone = new Set(events.map((e) => e.id));
    const left = all ? [] : known.events.filter((e) => !gone.has(e.id));
    if (left.length === 0) this.perDoc.delete(doc);
    else known.events = left;
  }

  /** Forgets events handed over or published long ago whose document was never drained (it was deleted): the maps are in insertion order. */
  forgetOld(): void {
    const before = Date.now() - MEMORY_MS;
    for (const memory of [this.published, this.mine]) {
      for (const [id, at] of memory) {
        if (at >= before) break;
        memory.delete(id);
      }
    }
    for (const [doc, { at }] of this.perDoc) {
      if (at >= before) break;
      this.perDoc.delete(doc);
    }
  }
}
