// How a deadline rule meets an activity write: a deadline activity may
// take `deadline_rule` instead of `due_date`, and then its due date is what the
// rule computes on the team's court calendar, with the computation kept beside it;
// a change of that calendar computes the team's open ones again, a page at a time
// (shared/src/jobs/team-syncs.ts).
import { invalidField } from '@lpm/shared/errors';
import type { CourtCalendarSettings } from '@lpm/shared/court-calendar';
import { newEvent } from '@lpm/shared/events';
import type { Identity } from '@lpm/shared/identity';
import type { Mark, Rewritten } from '@lpm/shared/jobs/team-syncs';
import type { ActivitiesRepository } from '../data/activities-repository.ts';
import type { ActivityRecord, DeadlineRule } from '../data/activity-entity.ts';
import type { detailShape } from './activity-shape.ts';
import { OPEN, derivedFields, signalsOf } from './activity-timing.ts';
import { deadlineOf } from './deadlines/deadlines.ts';
import { storedDeadline } from './deadlines/stored-deadline.ts';

type RuleFields = Pick<ActivityRecord, 'deadline' | 'rule_based'>;

/** What the sent fields become when a rule is among them: `due_date` computed; a sent due_date beside a rule is 400. */
export function withRule<B extends { due_date?: string | null; deadline_rule?: DeadlineRule | null }>(
  body: B,
  court: CourtCalendarSettings,
): B {
  if (!body.deadline_rule) return body;
  if (body.due_date !== undefined) throw invalidField('due_date', 'Send either due_date or deadline_rule, not both');
  return { ...body, due_date: deadlineOf(body.deadline_rule, court).due_date };
}

/** The computation a record's rule gives, and the marker; 400 where a rule does not fit the record. */
export function ruleFieldsOf(
  r: Pick<ActivityRecord, 'type' | 'recurrence' | 'deadline_rule'>,
  court: CourtCalendarSettings,
): RuleFields {
  if (!r.deadline_rule) return { deadline: null, rule_based: 0 };
  if (r.type !== 'deadline') throw invalidField('deadline_rule', 'deadline_rule is only for type deadline');
  if (r.recurrence) throw invalidField('deadline_rule', 'A deadline from a rule cannot recur');
  return { deadline: storedDeadline(deadlineOf(r.deadline_rule, court)), rule_based: 1 };
}

type Who = Pick<Identity, 'teamId' | 'userId' | 'settings'>;

/** What re-computing needs of the activities: their store, the detail read shape of a page of them (as events carry it), the clock. */
export interface CalendarDeps {
  activities: ActivitiesRepository;
  detailsOf(teamId: string, records: ActivityRecord[]): Promise<(r: ActivityRecord) => ReturnType<typeof detailShape>>;
  now(): Date;
}

/**
 * The team's court calendar changed (told by the gateway; a page of the team's open
 * rule-based activities, read before): each whose due date the rule now computes
 * otherwise gets it, and emits activity.updated. A calendar older than the one a
 * record was last computed on is not applied to it; applying the same calendar
 * again changes nothing. Resolves with how many moved, the list days they left and
 * joined (recounted when the run ends), and the error that stopped the page, if one
 * did.
 */
export async function applyCourtCalendar(
  deps: CalendarDeps,
  who: Who,
  changedAt: Date,
  records: ActivityRecord[],
  mark: Mark,
): Promise<Rewritten> {
  const court = who.settings.court_calendar;
  const tz = who.settings.timezone;
  // A record's links do not change with its due date: looked up once for the page.
  const detailOf = await deps.detailsOf(who.teamId, records);
  const { results, movedDays, failed } = await deps.activities.updateReads(
    records,
    async (current) => {
      if (!current.deadline_rule || !OPEN.includes(current.status)) return { result: false };
      if (current.calendar_at && current.calendar_at.getTime() > changedAt.getTime()) return { result: false };
      const deadline = storedDeadline(deadlineOf(current.deadline_rule, court));
      if (deadline.due_date === current.due_date) return { result: false };
      const now = deps.now();
      const next: ActivityRecord = {
        ...current,
        due_date: deadline.due_date,
        deadline,
        calendar_at: changedAt,
        updated_at: now,
      };
      Object.assign(next, derivedFields(next, tz), signalsOf(next, tz, now));
      const set: Partial<ActivityRecord> = {
        due_date: next.due_date,
        deadline,
        calendar_at: changedAt,
        updated_at: now,
        ...derivedFields(next, tz),
        due_soon_at: next.due_soon_at,
        overdue_at: next.overdue_at,
        reminder_at: next.reminder_at,
      };
      const event = newEvent(
        'activity.updated',
        who.teamId,
        detailOf(next),
        { due_date: current.due_date },
        who.userId,
      );
      return { result: true, write: { set, events: [event] } };
    },
    mark,
  );
  return { changed: results.filter(Boolean).length, movedDays, failed };
}
