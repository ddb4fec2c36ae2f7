// Failed authentications per client address: past AUTH_FAILURE_LIMIT
// failures (401 Missing or Invalid API key) in an AUTH_FAILURE_WINDOW, the address
// is refused with 429 for the rest of that window, before any key lookup. Counted
// in Redis under <REDIS_KEY_PREFIX>rl:auth:<address>, in process while Redis is away.
//
// A request is charged one failure BEFORE its key is looked up and the point is
// given back when the key turns out valid (or the store fails): a burst of
// concurrent bad keys cannot all pass a check made before any of them had failed,
// so an address never causes more than the limit of lookups per window.
import { seconds, type Counters, type Window } from './counters.ts';

export interface AuthFailureDecision {
  allowed: boolean;
  /** The failures allowed per window, those left and the seconds to the window's end (RateLimit-*, Retry-After). */
  limit: number;
  remaining: number;
  resetSeconds: number;
}

export interface AuthFailuresOptions {
  counters: Counters;
  /** Failures per window and address (AUTH_FAILURE_LIMIT). */
  limit: number;
  /** The window, whole seconds (AUTH_FAILURE_WINDOW). */
  windowMs: number;
}

export class AuthFailures {
  private readonly counters: Counters;
  private readonly window: Window;

  constructor(opts: AuthFailuresOptions) {
    this.counters = opts.counters;
    this.window = { name: 'rl:auth', points: opts.limit, durationSeconds: seconds(opts.windowMs) };
  }

  /** Counts the request as a failure of the address before its key is looked up; refused once the address is past the limit. */
  async charge(address: string): Promise<AuthFailureDecision> {
    const [count] = await this.counters.charge([this.window], address);
    return {
      allowed: count.allowed,
      limit: this.window.points,
      remaining: count.remaining,
      resetSeconds: seconds(count.msBeforeNext),
    };
  }

  /** The charged request did not fail authentication (valid key, or the store could not answer): its point is given back. */
  async refund(address: string): Promise<void> {
    await this.counters.refund(this.window, address);
  }
}
