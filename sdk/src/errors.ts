// What a failed call throws: the API's error envelope, its status and request id.

export class LpmError extends Error {
  readonly status: number;
  /** VALIDATION_ERROR, UNAUTHORIZED, FORBIDDEN, NOT_FOUND, DUPLICATE_ENTRY, RATE_LIMIT_EXCEEDED, ... */
  readonly code: string;
  readonly details: Record<string, unknown>;
  /** The X-Request-Id of the answer: quote it when reporting a problem. */
  readonly requestId: string | null;

  constructor(
    status: number,
    code: string,
    message: string,
    details: Record<string, unknown>,
    requestId: string | null,
  ) {
    super(message);
    this.name = 'LpmError';
    this.status = status;
    this.code = code;
    this.details = details;
    this.requestId = requestId;
  }
}

/** The error of an answer that is not 2xx, from its parsed envelope (or its status when it has none). */
export function errorOf(response: Response, body: unknown): LpmError {
  const e = (body as { error?: { code?: string; message?: string; details?: Record<string, unknown> } } | undefined)
    ?.error;
  return new LpmError(
    response.status,
    e?.code ?? 'UNKNOWN',
    e?.message ?? `HTTP ${response.status}`,
    e?.details ?? {},
    response.headers.get('x-request-id'),
  );
}
