// The financial domain's conditions, each with its fixed message (docs/decisions.md §1, §5).
import { badRequest, businessRule, invalidField, notFound } from '@lpm/shared/errors';

export const recordNotFound = () => notFound('Record not found');
export const invalidAmount = () => invalidField('amount', 'Invalid amount');
export const cannotCancelPaid = () => businessRule('Cannot cancel paid record', 'cannot_cancel_paid_record');
/** `fields`: the fields of the request that a paid record refuses, as the API names them. */
export const cannotModifyPaid = (fields: string[]) =>
  businessRule('Cannot modify paid record', 'cannot_modify_paid_record', { fields });
export const invalidTransition = (from: string, to: string) =>
  businessRule('Invalid status transition', 'invalid_status_transition', { from, to });
export const periodReversed = () => badRequest('from must not be after to', { field: 'from', type: 'invalid' });
export const periodTooLong = (max: number) =>
  badRequest(`The period may span at most ${max} buckets`, { field: 'to', type: 'invalid' });
