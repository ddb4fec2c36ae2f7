// A deadline rule (the calculator's input, as POST /v1/deadlines/compute and a
// deadline activity take it) computed on the team's court calendar: each part of
// the jurisdiction the rule names (uf, branch) replaces the team's, and the team's
// closures always apply.
import type { CourtBranch, CourtCalendarSettings, Uf } from '@lpm/shared/court-calendar';
import { CourtCalendar } from './court-calendar.ts';
import { computeDeadline, type Deadline, type DeadlineInput } from './deadline-calculator.ts';

export interface DeadlineRule extends DeadlineInput {
  jurisdiction?: { uf?: Uf | null; branch?: CourtBranch };
}

export function deadlineOf(rule: DeadlineRule, court: CourtCalendarSettings): Deadline {
  const own = rule.jurisdiction ?? {};
  const jurisdiction = { uf: own.uf !== undefined ? own.uf : court.jurisdiction.uf, branch: own.branch ?? court.jurisdiction.branch };
  return computeDeadline(rule, new CourtCalendar(jurisdiction, court.closures));
}
