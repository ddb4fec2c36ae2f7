// activity.due_soon, activity.overdue (docs/decisions.md §5, time-driven events) and the
// e-mail reminder. The due instants are set by every activity write
// (domain/activities.ts); the shared time signals emit each one once, even with
// several replicas. The reminder goes out as the internal event
// activity.reminder_due, which the reminders consumer turns into one e-mail.
import { recordSignals, type SignalDefinition } from '@lpm/shared/jobs/time-signals';
import type { ActivityRecord } from '../data/activity-entity.ts';
import type { Activities } from '../domain/activities.ts';

/** Not one of the API's events: only the reminders consumer binds to it (webhooks bind EVENT_TYPES). */
export const REMINDER_EVENT = 'activity.reminder_due';

const open = (r: ActivityRecord) => r.status === 'pending' || r.status === 'in_progress';

export function dueSignals(activities: Activities): SignalDefinition<ActivityRecord>[] {
  const signal = recordSignals('activities', (r: ActivityRecord) => activities.detailOf(r));
  return [
    // A warning whose deadline has also passed (the service was down) is dropped: the overdue signal says more.
    signal('activity.due_soon', 'due_soon_at', (r, now) => open(r) && !(r.overdue_at && r.overdue_at <= now)),
    signal('activity.overdue', 'overdue_at', open),
    signal(REMINDER_EVENT, 'reminder_at', (r) => open(r) && !!r.assigned_to),
  ];
}
