// The publications domain's conditions, each with its fixed message (docs/decisions.md §1, §5).
import { badRequest, notFound } from '@lpm/shared/errors';

export const publicationNotFound = () => notFound('Publication not found');
export const invalidDateRange = () => badRequest('from must not be after to', { field: 'from', type: 'invalid' });
