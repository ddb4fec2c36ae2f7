// The error answers the services give most, each asserted as expectError does
// (status, code, exact message, details object); each returns the answer's `error`.
import { expectError, type Answer } from './api.ts';

/** 400 VALIDATION_ERROR: the request itself is malformed. */
export const expectInvalid = (res: Answer, message: string) => expectError(res, 400, 'VALIDATION_ERROR', message);

/** 404 NOT_FOUND: the record is unknown, or the caller's team's it is not. */
export const expectNotFound = (res: Answer, message: string) => expectError(res, 404, 'NOT_FOUND', message);

/** 422 VALIDATION_ERROR: a well-formed request that a rule on the record's state refuses. */
export const expectRefused = (res: Answer, message: string) => expectError(res, 422, 'VALIDATION_ERROR', message);

/** 422 DUPLICATE_ENTRY: a value that must be unique in the team is taken. */
export const expectDuplicate = (res: Answer, message: string) => expectError(res, 422, 'DUPLICATE_ENTRY', message);
