// Delays of queued attempts beyond the retry schedule's (a receiver's Retry-After, a
// rate limit's wait) on a few tiers: each distinct delay is a delay queue of its own
// (Broker.publishDelayed), so they are whole seconds under a minute, whole minutes
// under an hour, whole hours above.
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

const stepOf = (ms: number) => (ms < MINUTE ? SECOND : ms < HOUR ? MINUTE : HOUR);

/** The smallest tier at or above `ms`: never sooner than asked. */
export const tierAtLeast = (ms: number): number => Math.ceil(ms / stepOf(ms)) * stepOf(ms);

/** The largest tier at or below `ms` (0 under a second): a wait that goes on in steps, never past its end. */
export const tierAtMost = (ms: number): number => Math.floor(ms / stepOf(ms)) * stepOf(ms);

/** Statuses whose Retry-After sets the next attempt. */
const SIGNALLING = new Set([429, 503]);

/**
 * The delay before the next attempt: the schedule's, or no sooner than the receiver's
 * Retry-After on a 429 or 503, capped at the schedule's longest delay.
 */
export function nextDelay(
  scheduled: number,
  schedule: readonly number[],
  statusCode: number | null,
  retryAfterMs: number | null | undefined,
): number {
  if (
    statusCode === null ||
    !SIGNALLING.has(statusCode) ||
    retryAfterMs === null ||
    retryAfterMs === undefined ||
    retryAfterMs <= scheduled
  )
    return scheduled;
  return Math.min(tierAtLeast(retryAfterMs), Math.max(scheduled, ...schedule));
}
