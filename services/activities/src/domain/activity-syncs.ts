// The team syncs of activities (shared/src/jobs/team-syncs.ts), in the order a team's
// runs go: its open rule-based deadlines computed again on its court calendar
// (deadline-activities.ts), then its open activities' due moments and signals in its
// time zone.
import type { Identity } from '@lpm/shared/identity';
import { rearmed } from '@lpm/shared/jobs/time-signals';
import type { Mark, Rewritten, TeamSyncWork } from '@lpm/shared/jobs/team-syncs';
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
    'time-zone': {
      read: (teamId, mark, limit) => store.readUnmarked(teamId, { open: 1 }, mark, limit),
      rewrite: (who, _changedAt, records, mark) => applyTimeZone(deps, who, records, mark),
      recount: (teamId, days) => store.recountDays(teamId, days),
      same: (done, next) => done.timezone === next.timezone,
    },
  };
}

/** The team's time zone changed (who.settings carries the new one): each of `records` (open) gets its due moment and signals again (rearmed). */
function applyTimeZone(
  deps: CalendarDeps,
  who: Pick<Identity, 'settings'>,
  records: ActivityRecord[],
  mark: Mark,
): Promise<Rewritten> {
  const now = deps.now();
  const tz = who.settings.timezone;
  return deps.activities.rewriteMoments(
    records,
    (r) => {
      const { due_soon_at, overdue_at, reminder_at } = r;
      return {
        due_at: derivedFields(r, tz).due_at,
        ...rearmed({ due_soon_at, overdue_at, reminder_at }, signalsOf(r, tz, now), now),
      };
    },
    mark,
  );
}
