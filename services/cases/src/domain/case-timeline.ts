// A case's timeline: the entries its writes and its activities' events add, kept in
// the case document (the newest TIMELINE_KEPT), and the page GET .../timeline answers.
//
// Stored as one JSON string: FerretDB decodes and encodes every nested value of a
// document it reads or writes, and the entries as sub-documents cost each write of
// the case about 40 % more store CPU at a dozen entries, more than twice as much at
// fifty (docs/ferretdb.md). Cases stored before that keep their entries as documents,
// read as they are.
import { exact } from '@lpm/shared/http/schemas';
import { newId } from '@lpm/shared/ids';
import { iso } from '@lpm/shared/time';
import type { DirectoryUser } from '@lpm/shared/upstream/user-directory';
import type { UserLookup } from '@lpm/shared/views/record-links';
import type { CaseRecord, StoredTimeline, TimelineEntry } from '../data/case-entity.ts';
import type { TimelineEvent } from '../contract/case-schemas.ts';

export const TIMELINE_KEPT = 100;

type PackedEntry = Omit<TimelineEntry, 'created_at'> & { created_at: string };

export function timelineEntry(
  who: { userId: string | null },
  type: TimelineEntry['type'],
  description: string,
  at: Date,
): TimelineEntry {
  return { id: newId('evt'), type, description, user_id: who.userId, created_at: at };
}

/** The entries of a stored timeline, oldest first. */
export function timelineEntries(stored: StoredTimeline | null | undefined): TimelineEntry[] {
  if (!stored) return [];
  if (typeof stored !== 'string') return stored;
  return (JSON.parse(stored) as PackedEntry[]).map((e) => ({ ...e, created_at: new Date(e.created_at) }));
}

/** The stored timeline with `entries` added, the oldest dropped past TIMELINE_KEPT. */
export function withEntries(stored: StoredTimeline | null | undefined, ...entries: TimelineEntry[]): string {
  return JSON.stringify([...timelineEntries(stored), ...entries].slice(-TIMELINE_KEPT));
}

/** The newest `limit` entries of a case's timeline, newest first, with the acting user's name. */
export async function timelineOf(
  record: Pick<CaseRecord, 'team_id' | 'timeline'>,
  limit: number,
  users: UserLookup,
): Promise<TimelineEvent[]> {
  const entries = timelineEntries(record.timeline).reverse().slice(0, limit);
  const userIds = [...new Set(entries.map((e) => e.user_id).filter((u): u is string => !!u))];
  const found = userIds.length ? await users.find(record.team_id, userIds) : new Map<string, DirectoryUser>();
  return entries.map((e) =>
    exact<TimelineEvent>()({
      id: e.id,
      type: e.type,
      description: e.description,
      user: e.user_id ? { id: e.user_id, name: found.get(e.user_id)?.name ?? null } : null,
      created_at: iso(e.created_at),
    }),
  );
}
