// The cases domain's conditions, each with its fixed message (docs/decisions.md §1, §5).
import { badRequest, businessRule, duplicate, invalidField } from '@lpm/shared/errors';

export const duplicateNumber = () => duplicate('Duplicate case number', 'duplicate_case_number', { field: 'number' });
export const invalidPhase = () => invalidField('phase', 'Invalid phase');
/** A CNJ-format number whose check digits or court codes are wrong, for a team with cnj_check "reject". */
export const invalidCnjNumber = () => businessRule('Invalid CNJ number', 'invalid_cnj_number', { field: 'number' });

/** Keys the platform sends for a won deal's case (the deals service, before cases carried their deal): no caller's key may take them. */
export const RESERVED_KEY_PREFIX = 'deal-won-case:';
export const reservedIdempotencyKey = () =>
  badRequest(`Idempotency-Key must not start with ${RESERVED_KEY_PREFIX}`, {
    field: 'Idempotency-Key',
    type: 'invalid',
  });
