// Recurring activities: a series starts with its first occurrence, each completion
// owes the next occurrence (carried in the completion's own write), and the owed one
// is stored right after the completion or, when that fails, by the series repair.
import { newEvent } from '@lpm/shared/events';
import { newId } from '@lpm/shared/ids';
import type { Logger } from '@lpm/shared/logger';
import { dayIn } from '@lpm/shared/time';
import type { ActivityRecord } from '../data/activity-entity.ts';
import type { ActivitiesRepository } from '../data/activities-repository.ts';
import type { detailShape } from './activity-shape.ts';
import { derivedFields, signalsOf } from './activity-timing.ts';
import { nextOccurrence } from './recurrence.ts';

/** Completions whose next occurrence is still owed, settled per run of the series repair. */
const OWED_BATCH = 100;

/** A new activity, and the next one of a series, starts with no completion. */
export const NOT_COMPLETED = { completed_at: null, completed_by: null, completion_notes: null };

/** The fields of a completion's write that carry the occurrence it owes its series. */
export const owing = (owed: ActivityRecord | null): Partial<ActivityRecord> =>
  owed ? { next_occurrence: owed, next_pending: 1 } : {};

/** A record given a recurrence becomes the first occurrence of its series (its own id names the series). */
export function startSeries(next: ActivityRecord, id: string, tz: string, now: Date): ActivityRecord {
  if (next.recurrence && !next.series_id)
    Object.assign(next, { series_id: id, series_start: next.due_date ?? dayIn(tz, now), occurrence: 1 });
  if (next.due_date && next.occurrence === 1 && next.series_id) next.series_start = next.due_date;
  return next;
}

/**
 * The occurrence a completion of `done` owes its series (pending, same fields, the
 * next due date, its occurrence_key), or null when the series has ended. The
 * completion's own write carries it (next_occurrence), so only a completion that
 * is written advances the series.
 */
export function owedOccurrence(done: ActivityRecord, tz: string, now: Date): ActivityRecord | null {
  if (!done.recurrence || !done.series_id || !done.series_start) return null;
  const next = nextOccurrence(done.series_start, done.recurrence, done.occurrence);
  if (!next) return null;
  const base = {
    ...done,
    _id: newId('act'),
    status: 'pending' as const,
    due_date: next.due_date,
    occurrence: next.occurrence,
    occurrence_key: `${done.series_id}:${next.occurrence}`,
    next_occurrence: null,
    next_pending: 0,
    ...NOT_COMPLETED,
    created_at: now,
    updated_at: now,
    version: 1,
  };
  return { ...base, ...derivedFields(base, tz), ...signalsOf(base, tz, now) };
}

export interface SeriesRepairDeps {
  activities: ActivitiesRepository;
  /** The detail read shape, as the owed occurrence's activity.created carries it. */
  detailOf(record: ActivityRecord): Promise<ReturnType<typeof detailShape>>;
  logger?: Logger;
}

export class SeriesRepair {
  private readonly deps: SeriesRepairDeps;

  constructor(deps: SeriesRepairDeps) {
    this.deps = deps;
  }

  /**
   * Stores the occurrence the completion `doneId` owes and clears the debt. Once per
   * occurrence: its id and its occurrence_key are unique, so the completion and the
   * series repair may both get here.
   */
  private async settle(teamId: string, doneId: string, owed: ActivityRecord, actorId: string | null): Promise<void> {
    const event = newEvent('activity.created', teamId, await this.deps.detailOf(owed), null, actorId);
    await this.deps.activities.insertOccurrence(owed, [event]);
    await this.deps.activities.settled(teamId, doneId);
  }

  /** Right after a completion: the completion stands whatever happens here; what fails is left to the series repair. */
  async settleAfterCompletion(
    who: { teamId: string; userId: string },
    doneId: string,
    owed: ActivityRecord,
  ): Promise<void> {
    try {
      await this.settle(who.teamId, doneId, owed, who.userId);
    } catch (err) {
      this.deps.logger?.warn({ err, activity: doneId }, 'next occurrence not stored yet; the series repair stores it');
    }
  }

  /** The occurrences owed by completions whose process died, or whose store failed, before storing them. */
  async settleOwedOccurrences(): Promise<number> {
    const owing = await this.deps.activities.owedOccurrences(OWED_BATCH);
    for (const done of owing)
      await this.settle(done.team_id, done._id, done.next_occurrence as ActivityRecord, done.completed_by);
    return owing.length;
  }
}
