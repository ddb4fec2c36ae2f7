// Requests per client address to the routes served without a key (/health,
// /v1/openapi.*, /docs): past PUBLIC_RATE_LIMIT in a PUBLIC_RATE_WINDOW the address
// gets 429 for the rest of that window. Counted in Redis under
// <REDIS_KEY_PREFIX>rl:public:<address>, in process while Redis is away. Requests
// through the internal listener are not counted (access.ts).
import { seconds, type Counters, type Window } from './counters.ts';

export interface PublicRequestDecision {
  allowed: boolean;
  /** The requests allowed per window, those left and the seconds to the window's end (RateLimit-*, Retry-After). */
  limit: number;
  remaining: number;
  resetSeconds: number;
}

export interface PublicRequestsOptions {
  counters: Counters;
  /** Requests per window and address (PUBLIC_RATE_LIMIT). */
  limit: number;
  /** The window, whole seconds (PUBLIC_RATE_WINDOW). */
  windowMs: number;
}

export class PublicRequests {
  private readonly counters: Counters;
  private readonly windows: readonly Window[];

  constructor(opts: PublicRequestsOptions) {
    this.counters = opts.counters;
    this.windows = [{ name: 'rl:public', points: opts.limit, durationSeconds: seconds(opts.windowMs) }];
  }

  /** Counts one request of the address. */
  async charge(address: string): Promise<PublicRequestDecision> {
    const [count] = await this.counters.charge(this.windows, address);
    return {
      allowed: count.allowed,
      limit: this.windows[0].points,
      remaining: count.remaining,
      resetSeconds: seconds(count.msBeforeNext),
    };
  }
}
