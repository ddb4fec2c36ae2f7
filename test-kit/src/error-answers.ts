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

/** 503 SERVICE_UNAVAILABLE: another writer held the record past the write's lock wait. */
export const expectBusy = (res: Answer) => expectError(res, 503, 'SERVICE_UNAVAILABLE', 'The record is busy; retry');

/**
 * A write that leaves out text `field` is 400 `<field> is required`, naming it;
 * one that sends it blank is 400 `<field> must not be empty`. `send` writes a body.
 */
export async function expectRequiredText(
  send: (body: Record<string, unknown>) => Promise<Answer>,
  field: string,
  without: Record<string, unknown>,
): Promise<void> {
  const err = expectInvalid(await send(without), `${field} is required`);
  expect(err.details).toEqual({ field, type: 'required' });
  expectInvalid(await send({ [field]: '   ' }), `${field} must not be empty`);
}
