// When an activity is due, and the instants of its time-driven signals (due_soon,
// overdue, the e-mail reminder), computed from its fields in the team's time zone:
// every write that changes what they depend on stores them again.
import { armDeadline } from '@lpm/shared/jobs/time-signals';
import { zonedMoment } from '@lpm/shared/time';
import type { ActivityRecord, ActivityStatus } from '../data/activity-entity.ts';
import { PRIORITY_RANK } from '@lpm/shared/priority';

/** The statuses whose activity is still due. */
export const OPEN: ActivityStatus[] = ['pending', 'in_progress'];

/** The due moment: due_date at due_time in the team's zone, 23:59 without a time. */
export const dueMoment = (r: Pick<ActivityRecord, 'due_date' | 'due_time'>, timeZone: string): Date | null =>
  r.due_date ? zonedMoment(r.due_date, timeZone, r.due_time ?? '23:59') : null;

type SignalFields = Pick<ActivityRecord, 'due_soon_at' | 'overdue_at' | 'reminder_at'>;

/** The instants of the time-driven signals; none while completed or cancelled. */
export function signalsOf(
  r: Pick<ActivityRecord, 'status' | 'due_date' | 'due_time' | 'reminder' | 'assigned_to'>,
  timeZone: string,
  now: Date,
): SignalFields {
  const deadline = OPEN.includes(r.status) ? dueMoment(r, timeZone) : null;
  const { warnAt, overdueAt } = armDeadline(deadline, now);
  let reminderAt: Date | null = null;
  const rem = r.reminder;
  if (deadline && rem?.enabled && rem.channels.includes('email') && r.assigned_to) {
    const at = new Date(deadline.getTime() - rem.before_minutes * 60_000);
    // A reminder whose moment has passed when it is set is not sent (docs/decisions.md §10).
    if (at.getTime() > now.getTime()) reminderAt = at;
  }
  return { due_soon_at: warnAt, overdue_at: overdueAt, reminder_at: reminderAt };
}

export function derivedFields(
  r: Pick<ActivityRecord, 'priority' | 'due_date' | 'due_time' | 'status'>,
  timeZone: string,
) {
  return {
    priority_rank: PRIORITY_RANK[r.priority],
    due_missing: r.due_date ? 0 : 1,
    due_at: dueMoment(r, timeZone),
    open: OPEN.includes(r.status) ? 1 : 0,
  };
}
