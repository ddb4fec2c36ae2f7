// How a case keeps its timeline: its last TIMELINE_KEPT entries as one JSON string.
// FerretDB decodes and encodes every nested value of a document it reads or writes,
// and the entries as sub-documents cost each write of the case about 40 % more store
// CPU at a dozen entries, more than twice as much at fifty (docs/ferretdb.md). Cases
// stored before it keep their entries as documents, read as they are.
import type { StoredTimeline, TimelineEntry } from '../data/case-entity.ts';

export const TIMELINE_KEPT = 100;

type PackedEntry = Omit<TimelineEntry, 'created_at'> & { created_at: string };

/** The entries of a stored timeline, oldest first. */
export function timelineEntries(stored: StoredTimeline | null | undefined): TimelineEntry[] {
  if (!stored) return [];
  if (typeof stored !== 'string') return stored;
  return (JSON.parse(stored) as PackedEntry[]).map((e) => ({ ...e, created_at: new Date(e.created_at) }));
}

/** The stored timeline with `entries` added after it, keeping the last TIMELINE_KEPT. */
export function timelineWith(stored: StoredTimeline | null | undefined, entries: TimelineEntry[]): string {
  return JSON.stringify([...timelineEntries(stored), ...entries].slice(-TIMELINE_KEPT));
}
