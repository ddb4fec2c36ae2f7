// The team syncs of activities (shared/src/jobs/team-syncs.ts), in the order a team's
// runs go: its open rule-based deadlines computed again on its court calendar
// (deadline-activities.ts), then its open activities' due moments and signals in its
// time zone.
import { rearmed } from '@lpm/shared/jobs/time-signals';
import type { TeamSyncWork } from '@lpm/shared/jobs/team-syncs';
import { timeZoneSync } from '@lpm/shared/jobs/time-zone-sync';
import type { ActivityRecord } from '../data/activity-entity.ts';
import { derivedFields, signalsOf } from './activity-timing.ts';
import { applyCourtCalendar, type CalendarDeps } from './deadline-activities.ts';

export function activitySyncWork(
  deps: CalendarDeps,
): Record<'court-calendar' | 'time-zone', TeamSyncWork<ActivityRecord>> {
  const store = deps.activities;
  return {
    'court-calendar': {
      read: (teamId, mark, limit) => store.readUnmarked(teamId, { rule_based: 1, open: 1 }, mark, limit),
      rewrite: (who, changedAt, records, mark) => applyCourtCalendar(deps, who, changedAt, records, mark),
      recount: (teamId, days) => store.recountDays(teamId, days),
      same: (done, next) => JSON.stringify(done.court_calendar) === JSON.stringify(next.court_calendar),
    },
    'time-zone': timeZoneSync(store, { open: 1 }, zonedMoments, () => deps.now()),
  };
}

/** An open activity's due moment and signals in the zone `tz` (rearmed). */
function zonedMoments(r: ActivityRecord, tz: string, now: Date) {
  const { due_soon_at, overdue_at, reminder_at } = r;
  return {
    due_at: derivedFields(r, tz).due_at,
    ...rearmed({ due_soon_at, overdue_at, reminder_at }, signalsOf(r, tz, now), now),
  };
}
