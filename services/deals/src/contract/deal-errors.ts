// The deals domain's conditions, each with its fixed message (docs/decisions.md §1, §5).
import { businessRule, invalidField, notFound } from '@lpm/shared/errors';

export const dealNotFound = () => notFound('Deal not found');
export const invalidPhase = () => invalidField('phase', 'Invalid phase');
export const dealClosed = () => businessRule('Deal already closed', 'deal_already_closed');
export const dealArchived = () => businessRule('Deal is archived', 'deal_is_archived');
export const tooManyDecimals = (field: string) => invalidField(field, `${field} must have at most 2 decimals`);
