// A deadline rule (the calculator's input, as POST /v1/deadlines/compute and a
// deadline activity take it) computed on the team's court calendar: each part of
// the jurisdiction the rule names (uf, branch) replaces the team's, and the team's
// closures always apply.
import { invalidField } from '@lpm/shared/errors';
import type { CourtCalendarSettings } from '@lpm/shared/court-calendar';
import type { Deadline, DeadlineRule } from '../../data/activity-entity.ts';
import { CourtCalendar } from './court-calendar.ts';
import { computeDeadline } from './deadline-calculator.ts';

/** The years a start date may fall in: the calendar's rules hold for them, and the trail's dates stay four-digit years. */
const FIRST_YEAR = 1990;
const LAST_YEAR = 2100;

export function deadlineOf(rule: DeadlineRule, court: CourtCalendarSettings): Deadline {
  for (const [field, date] of Object.entries(rule.start) as [string, string][]) {
    const year = Number(date.slice(0, 4));
    if (year < FIRST_YEAR || year > LAST_YEAR)
      throw invalidField(`start.${field}`, `start.${field} must be from ${FIRST_YEAR} to ${LAST_YEAR}`);
  }
  const own = rule.jurisdiction ?? {};
  const jurisdiction = {
    uf: own.uf !== undefined ? own.uf : court.jurisdiction.uf,
    branch: own.branch ?? court.jurisdiction.branch,
  };
  return computeDeadline(rule, new CourtCalendar(jurisdiction, court.closures));
}
