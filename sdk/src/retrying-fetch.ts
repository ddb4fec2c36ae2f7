// The fetch under every call: an Idempotency-Key on each POST (kept across its
// retries, so a retried create is not made twice), and retries of 429 after
// Retry-After and of 503 with exponential backoff.
import { randomUUID } from 'node:crypto';

export interface RetryOptions {
  /** Retries after the first attempt (default 3). */
  maxRetries?: number;
  /** First 503 backoff; it doubles on each retry, with jitter (default 500 ms). */
  backoffMs?: number;
  /** The longest wait before a retry, Retry-After included (default 60 s). */
  maxDelayMs?: number;
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

export function retryingFetch(base: (request: Request) => Promise<Response>, opts: RetryOptions = {}) {
  const maxRetries = opts.maxRetries ?? 3;
  const backoffMs = opts.backoffMs ?? 500;
  const maxDelayMs = opts.maxDelayMs ?? 60_000;
  return async (request: Request): Promise<Response> => {
    if (request.method === 'POST' && !request.headers.has('idempotency-key'))
      request.headers.set('idempotency-key', randomUUID());
    for (let attempt = 0; ; attempt++) {
      const response = await base(request.clone());
      if (attempt >= maxRetries || (response.status !== 429 && response.status !== 503)) return response;
      const retryAfter = Number(response.headers.get('retry-after'));
      const delay =
        response.status === 429 && Number.isFinite(retryAfter) && retryAfter >= 0
          ? retryAfter * 1000
          : backoffMs * 2 ** attempt * (0.5 + Math.random() / 2);
      await response.body?.cancel();
      await sleep(Math.min(delay, maxDelayMs));
    }
  };
}
