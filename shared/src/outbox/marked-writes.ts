// What a write asks of the relay's marks (marks.ts): a mark to store its events
// under, settled once with what came of the write.
import type { DomainEvent } from '../events.ts';

/** A write's hold on a mark: settle it exactly once, with what came of the write. */
export interface MarkTicket {
  readonly mark: string;
  /** The store took the write with these events: they are published, in order after the document's earlier ones. */
  stored(events: DomainEvent[]): void;
  /** The store refused the write (nothing stored). */
  refused(): void;
  /** The write failed without saying whether it was stored. */
  failed(): void;
}

/** What a record store asks of the relay's marks (store/record-store.ts). */
export interface MarkedWrites {
  /**
   * The mark for a write of events to the document, once its marker is stored; null
   * when too many events already wait for the broker (the write then uses the
   * per-document outbox).
   */
  take(collection: string, id: string): Promise<MarkTicket | null>;
  /** Whether the events the document holds under `mark` (null: none) are all published, so a write may replace them. */
  settled(collection: string, id: string, mark: string | null): Promise<boolean>;
}
