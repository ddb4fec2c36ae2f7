// What the activities service's events change in a case: its activities_count (the
// case's activities in any status) and its timeline (activity_added,
// activity_completed), each event applied once.
import { AppError } from '@lpm/shared/errors';
import type { TimelineEntry } from '../data/case-entity.ts';
import type { CasesRepository } from '../data/cases-repository.ts';
import { timelineEntry, withEntries } from './case-timeline.ts';

/** What an activity event tells a case (consumers/activity-events.ts reads it off the event). */
export interface ActivityEventNews {
  teamId: string;
  type: 'activity.created' | 'activity.updated' | 'activity.completed' | 'activity.deleted';
  activity: { id: string; title: string; case_id: string | null };
  /** On activity.updated: the case_id before, when the link changed (undefined: unchanged). */
  previousCaseId?: string | null;
  actorId: string | null;
  at: Date;
  /** The event's id: a redelivered event (a consumer that died before it completed) changes nothing again. */
  eventId: string;
}

/** The cases an activity event counts into or out of, and the one whose timeline shows its completion. */
export function caseChangesOf(event: Pick<ActivityEventNews, 'type' | 'activity' | 'previousCaseId'>): {
  adds: string[];
  removes: string[];
  completed: string | null;
} {
  const { type, activity, previousCaseId } = event;
  const caseId = activity.case_id;
  const adds: string[] = [];
  const removes: string[] = [];
  if (type === 'activity.created' && caseId) adds.push(caseId);
  if (type === 'activity.deleted' && caseId) removes.push(caseId);
  if (type === 'activity.updated' && previousCaseId !== undefined && previousCaseId !== caseId) {
    if (previousCaseId) removes.push(previousCaseId);
    if (caseId) adds.push(caseId);
  }
  return { adds, removes, completed: type === 'activity.completed' ? caseId : null };
}

/** Activity events remembered per case as applied: far more than can be in flight for one case while a claim goes stale. */
export const COUNTED_EVENTS_KEPT = 200;

export class CaseActivityCounts {
  private readonly cases: CasesRepository;

  constructor(cases: CasesRepository) {
    this.cases = cases;
  }

  /**
   * An activity event's news for its case (docs/decisions.md §5: activities_count counts the
   * case's activities in any status; the timeline shows activity_added and
   * activity_completed). The consumer's dedupe runs each event once.
   */
  async record(event: ActivityEventNews): Promise<void> {
    const { teamId, activity, actorId, at, eventId } = event;
    const { adds, removes, completed } = caseChangesOf(event);
    const who = { userId: actorId };
    for (const id of removes) await this.count(teamId, id, eventId, -1, null);
    for (const id of adds)
      await this.count(
        teamId,
        id,
        eventId,
        +1,
        timelineEntry(who, 'activity_added', `Activity added: ${activity.title}`, at),
      );
    if (completed)
      await this.count(
        teamId,
        completed,
        eventId,
        0,
        timelineEntry(who, 'activity_completed', `Activity completed: ${activity.title}`, at),
      );
  }

  /**
   * Applies one event to a case once: the event's id is written with the count, so a
   * copy of it (the consumer's claim and the count are two writes, and a consumer can
   * die between them) finds it counted.
   */
  private async count(
    teamId: string,
    caseId: string,
    eventId: string,
    delta: number,
    entry: TimelineEntry | null,
  ): Promise<void> {
    try {
      await this.cases.update(
        teamId,
        caseId,
        async (current) => {
          const counted = current.counted_events ?? [];
          if (counted.includes(eventId)) return { result: undefined };
          return {
            result: undefined,
            write: {
              set: {
                // Not clamped: a delete applied before its create (a retried create) must still cancel it.
                activities_count: current.activities_count + delta,
                counted_events: [...counted, eventId].slice(-COUNTED_EVENTS_KEPT),
                ...(entry ? { timeline: withEntries(current.timeline, entry) } : {}),
              },
              events: [],
            },
          };
        },
        ['timeline', 'counted_events'],
      );
    } catch (err) {
      // A case of another team or one that does not exist has nothing to count.
      if (err instanceof AppError && err.status === 404) return;
      throw err;
    }
  }
}
