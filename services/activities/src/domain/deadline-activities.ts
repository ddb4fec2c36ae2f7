// How a deadline rule meets an activity write (issue 29): a deadline activity may
// take `deadline_rule` instead of `due_date`, and then its due date is what the
// rule computes on the team's court calendar, with the computation kept beside it.
import { invalidField } from '@lpm/shared/errors';
import type { CourtCalendarSettings } from '@lpm/shared/court-calendar';
import type { ActivityRecord } from '../data/activity-entity.ts';
import { deadlineOf, type DeadlineRule } from './deadlines/deadlines.ts';

type RuleFields = Pick<ActivityRecord, 'deadline' | 'rule_based'>;

/** What the sent fields become when a rule is among them: `due_date` computed; a sent due_date beside a rule is 400. */
export function withRule<B extends { due_date?: string | null; deadline_rule?: DeadlineRule | null }>(body: B, court: CourtCalendarSettings): B {
  if (!body.deadline_rule) return body;
  if (body.due_date !== undefined) throw invalidField('due_date', 'Send either due_date or deadline_rule, not both');
  return { ...body, due_date: deadlineOf(body.deadline_rule, court).due_date };
}

/** The computation a record's rule gives, and the marker; 400 where a rule does not fit the record. */
export function ruleFieldsOf(r: Pick<ActivityRecord, 'type' | 'recurrence' | 'deadline_rule'>, court: CourtCalendarSettings): RuleFields {
  if (!r.deadline_rule) return { deadline: null, rule_based: 0 };
  if (r.type !== 'deadline') throw invalidField('deadline_rule', 'deadline_rule is only for type deadline');
  if (r.recurrence) throw invalidField('deadline_rule', 'A deadline from a rule cannot recur');
  return { deadline: deadlineOf(r.deadline_rule, court), rule_based: 1 };
}
