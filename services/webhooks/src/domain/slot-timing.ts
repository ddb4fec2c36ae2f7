// How long attempts wait for a webhook's slots, and when they go back to the queue instead (Deliveries).
/** A job waiting for a slot of a busy webhook comes back after this long. */
export const DEFER_MS = 1000;
/** ... or after this long when the webhook's last attempt failed (a receiver that is down or times out). */
export const STRUGGLING_DEFER_MS = 5000;
/**
 * How long an attempt waits for a slot of a webhook that answers: its slots turn over
 * within a POST, and a trip through the delay queue costs a publish, a claim and
 * three reads. The attempt holds its message meanwhile, so the wait is bounded.
 */
export const SLOT_WAIT_MS = 2000;
/**
 * ... and how long in all while the webhook answers quickly: its slots then wait on
 * this process (its POST permits, the CPU), not on the receiver, and a trip through
 * the delay queue would only add work to a busy process.
 */
export const QUICK_SLOT_WAIT_MS = 30_000;
/**
 * A webhook whose last POST took longer than this (or SLOW_POST_FACTOR typical POSTs, when more)
 * is slow: its waiting attempts go back after SLOT_WAIT_MS. So is one with a POST in flight for
 * longer: its slots are held by a receiver that hangs or times out, and attempts waiting for them
 * would hold the fan-out's events (and with them every other webhook's deliveries) until the first
 * answer; they go the queued way instead.
 */
export const SLOW_POST_MS = 1000;
export const SLOW_POST_FACTOR = 8;
/** How often an attempt waiting for a slot checks whether it is still worth waiting. */
export const SLOT_CHECK_MS = 250;
/** ... of a webhook whose last attempt failed: its one slot may be held for a whole timeout, so its attempts go back at once. */
export const STRUGGLING_SLOT_WAIT_MS = 100;
/** A job whose attempt another copy holds comes back after this long: to find it made, or the claim of a dead holder over. */
export const CLAIMED_DEFER_MS = STRUGGLING_DEFER_MS;
