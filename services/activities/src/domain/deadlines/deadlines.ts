// A deadline rule (the calculator's input, as POST /v1/deadlines/compute and a
// deadline activity take it) computed on the team's court calendar: the rule's own
// jurisdiction when it names one, the team's otherwise, and always the team's closures.
import type { CourtBranch, CourtCalendarSettings, Uf } from '@lpm/shared/court-calendar';
import { CourtCalendar } from './court-calendar.ts';
import { computeDeadline, type Deadline, type DeadlineInput } from './deadline-calculator.ts';

export interface DeadlineRule extends DeadlineInput {
  jurisdiction?: { uf?: Uf | null; branch?: CourtBranch };
}

export function deadlineOf(rule: DeadlineRule, court: CourtCalendarSettings): Deadline {
  const jurisdiction = rule.jurisdiction ? { uf: rule.jurisdiction.uf ?? null, branch: rule.jurisdiction.branch ?? 'state' } : court.jurisdiction;
  return computeDeadline(rule, new CourtCalendar(jurisdiction, court.closures));
}
