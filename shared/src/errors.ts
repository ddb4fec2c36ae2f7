// The one error type of the platform. Each constructor fixes a status and its
// code (docs/decisions.md §1); toAppError() and createHttpApp's error handler are the one
// place anything thrown becomes a response.
import { isStoreError } from './store/store-errors.ts';

export const ERROR_CODES = [
  'VALIDATION_ERROR',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'NOT_FOUND',
  'DUPLICATE_ENTRY',
  'RATE_LIMIT_EXCEEDED',
  'PAYLOAD_TOO_LARGE',
  'INTERNAL_ERROR',
  'SERVICE_UNAVAILABLE',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export type ErrorDetails = Record<string, unknown>;

export class AppError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly details: ErrorDetails;

  constructor(status: number, code: ErrorCode, message: string, details: ErrorDetails = {}, options?: ErrorOptions) {
    super(message, options);
    this.name = 'AppError';
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

export const badRequest = (message: string, details: ErrorDetails = {}) =>
  new AppError(400, 'VALIDATION_ERROR', message, details);
export const requiredField = (field: string) => badRequest(`${field} is required`, { field, type: 'required' });
export const invalidField = (field: string, message: string, extra: ErrorDetails = {}) =>
  badRequest(message, { field, type: 'invalid', ...extra });
/** An update that sends none of the fields it could change. */
export const noFieldsToUpdate = () => badRequest('No fields to update');
export const unknownField = (field: string) => badRequest(`Unknown field: ${field}`, { field, type: 'unknown' });
export const unauthorized = (message: string) => new AppError(401, 'UNAUTHORIZED', message);
export const forbidden = (message = 'Insufficient permissions') => new AppError(403, 'FORBIDDEN', message);
export const notFound = (message: string) => new AppError(404, 'NOT_FOUND', message);
/** The records every service links to, by their fixed messages. */
export const userNotFound = () => notFound('User not found');
export const clientNotFound = () => notFound('Client not found');
export const caseNotFound = () => notFound('Case not found');
/** 409: a unique value taken (webhook URL). */
export const conflict = (message: string, reason: string) => new AppError(409, 'DUPLICATE_ENTRY', message, { reason });
/** 422 for a duplicate business key (CPF, CNPJ, case number). */
export const duplicate = (message: string, reason: string, details: ErrorDetails = {}) =>
  new AppError(422, 'DUPLICATE_ENTRY', message, { reason, ...details });
/** 422 for any other business rule. */
export const businessRule = (message: string, reason: string, details: ErrorDetails = {}) =>
  new AppError(422, 'VALIDATION_ERROR', message, { reason, ...details });
export const rateLimited = (message = 'Rate limit exceeded', details: ErrorDetails = {}) =>
  new AppError(429, 'RATE_LIMIT_EXCEEDED', message, details);
export const payloadTooLarge = () => new AppError(413, 'PAYLOAD_TOO_LARGE', 'Request body exceeds 1 MiB');
export const serviceUnavailable = (message = 'Service unavailable', options?: ErrorOptions) =>
  new AppError(503, 'SERVICE_UNAVAILABLE', message, {}, options);
export const internalError = (options?: ErrorOptions) =>
  new AppError(500, 'INTERNAL_ERROR', 'Internal server error', {}, options);

export interface ErrorBody {
  success: false;
  error: { code: ErrorCode; message: string; details: ErrorDetails };
}

export function errorBody(err: AppError): ErrorBody {
  return { success: false, error: { code: err.code, message: err.message, details: err.details } };
}

interface FrameworkError {
  code?: string;
  statusCode?: number;
}

/** Maps anything thrown to an AppError; unknown errors become a 500 whose text never reaches the client. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const e = (err ?? {}) as FrameworkError;
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return payloadTooLarge();
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return badRequest('Content-Type must be application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return badRequest('Invalid JSON body');
    case 'FST_ERR_BAD_URL':
      return badRequest('Invalid URL encoding');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return badRequest('Path segment too long');
  }
  if (e instanceof SyntaxError || (e.statusCode === 400 && e.code === undefined))
    return badRequest('Invalid JSON body');
  if (isStoreError(err)) return serviceUnavailable('Service unavailable', { cause: err });
  return internalError({ cause: err });
}
