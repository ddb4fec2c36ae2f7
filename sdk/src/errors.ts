// What a failed call throws: the API's error envelope, its status and request id.

export class LpmError extends Error {
  readonly status: number;
  /** VALIDATION_ERROR, UNAUTHORIZED, FORBIDDEN, NOT_FOUND, DUPLICATE_ENTRY, RATE_LIMIT_EXCEEDED, ... */
  readonly code: string;
  readonly details: Record<string, unknown>;
  /** The X-Request-Id of the answer: quote it when reporting a problem. */
  readonly requestId: string | null;

  constructor(status: number, code: string, message: string, details: Record<string, unknown>, requestId: string | null) {
    super(message);
    this.name = 'LpmError';
    this.status = status;
    this.code = code;
    this.details = details;
    this.requestId = requestId;
  }
}

/** The error of an answer that is not 2xx, from its envelope (or its status when it has none). */
export async function errorOf(response: Response): Promise<LpmError> {
  const requestId = response.headers.get('x-request-id');
  const body = (await response.json().catch(() => null)) as { error?: { code?: string; message?: string; details?: Record<string, unknown> } } | null;
  const e = body?.error;
  return new LpmError(response.status, e?.code ?? 'UNKNOWN', e?.message ?? `HTTP ${response.status}`, e?.details ?? {}, requestId);
}
