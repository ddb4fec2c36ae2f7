// A case's timeline: the entries its writes and its activities' events add, kept in
// the case document (the newest TIMELINE_KEPT), and the page GET .../timeline answers.
import { exact } from '@lpm/shared/http/schemas';
import { newId } from '@lpm/shared/ids';
import { iso } from '@lpm/shared/time';
import type { DirectoryUser } from '@lpm/shared/upstream/user-directory';
import type { UserLookup } from '@lpm/shared/views/record-links';
import type { CaseRecord, TimelineEntry } from '../data/case-entity.ts';
import type { TimelineEvent } from '../contract/case-schemas.ts';

const TIMELINE_KEPT = 100;

export function timelineEntry(who: { userId: string | null }, type: TimelineEntry['type'], description: string, at: Date): TimelineEntry {
  return { id: newId('evt'), type, description, user_id: who.userId, created_at: at };
}

/** The timeline with `entries` added, the oldest dropped past TIMELINE_KEPT. */
export function withEntries(timeline: TimelineEntry[] | null | undefined, ...entries: TimelineEntry[]): TimelineEntry[] {
  return [...(timeline ?? []), ...entries].slice(-TIMELINE_KEPT);
}

/** The newest `limit` entries of a case's timeline, newest first, with the acting user's name. */
export async function timelineOf(record: Pick<CaseRecord, 'team_id' | 'timeline'>, limit: number, users: UserLookup): Promise<TimelineEvent[]> {
  const entries = [...(record.timeline ?? [])].reverse().slice(0, limit);
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
