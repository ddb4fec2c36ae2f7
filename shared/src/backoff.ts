// The one capped exponential backoff every retry loop uses: a store or broker that
// does not answer, a task that fails to start, a team sync that fails, a process
// the launcher starts again.

export interface Backoff {
  /** The delay after the first failure. */
  firstMs: number;
  /** The longest delay. */
  maxMs: number;
  /** Spread each delay by ±this fraction (0.2: 80-120 %), so that many waiters do not retry at once. */
  jitter?: number;
}

/** The delay after `failures` earlier failures in a row (0: the first one): firstMs doubling up to maxMs. */
export function backoffDelayMs(failures: number, { firstMs, maxMs, jitter = 0 }: Backoff): number {
  const base = Math.min(maxMs, firstMs * 2 ** Math.min(Math.max(failures, 0), 30));
  return jitter ? Math.min(maxMs, Math.round(base * (1 - jitter + Math.random() * 2 * jitter))) : base;
}
