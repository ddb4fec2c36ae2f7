// The activities domain's conditions, each with its fixed message (docs/decisions.md §1, §5 "Activities").
import { businessRule, notFound } from '@lpm/shared/errors';
import { LAST_DAY } from '@lpm/shared/time';

export const activityNotFound = () => notFound('Activity not found');
export const dealNotFound = () => notFound('Deal not found');
export const invalidTransition = () => businessRule('Invalid status transition', 'invalid_status_transition');
export const alreadyCompleted = () => businessRule('Activity already completed', 'activity_already_completed');
export const completeCancelled = () =>
  businessRule('Cannot complete cancelled activity', 'cannot_complete_cancelled_activity');
export const deleteCompleted = () =>
  businessRule('Cannot delete completed activity', 'cannot_delete_completed_activity');
/** A series' next occurrence would fall past the last calendar day the platform takes (docs/limits.md). */
export const occurrencePastCalendar = () =>
  businessRule(`Next occurrence would fall after ${LAST_DAY}`, 'occurrence_past_calendar');
