// Per-team request limits (decisions §7): a minute and a day window per plan,
// counted in Redis so every gateway replica shares them (counters.ts).
import type { RateLimiterRes } from 'rate-limiter-flexible';
import { PLAN_LIMITS, PLANS, type Plan } from '../domain/plans.ts';
import { seconds, take, type Counters } from './counters.ts';

export interface LimitDecision {
  allowed: boolean;
  /** The minute window's limit, remaining requests and seconds to its reset (RateLimit-* headers). */
  limit: number;
  remaining: number;
  resetSeconds: number;
  /** Set when refused: which window refused and when to retry. */
  window?: 'minute' | 'day';
  retryAfterSeconds?: number;
}

interface WindowLimiter {
  consume(key: string): Promise<RateLimiterRes>;
}

const MINUTE = 60;
const DAY = 86_400;

export interface TeamLimitsOptions {
  counters: Counters;
}

export class TeamLimits {
  private readonly perPlan: Record<Plan, { minute: WindowLimiter; day: WindowLimiter | null }>;

  constructor(opts: TeamLimitsOptions) {
    // One limiter per plan and window, all on the same keys: a plan change only
    // changes the limit the next request is compared with, not its count.
    const limiter = (window: 'm' | 'd', points: number, duration: number): WindowLimiter =>
      opts.counters.window(`rl:${window}`, points, duration);
    this.perPlan = Object.fromEntries(
      PLANS.map((plan) => {
        const { perMinute, perDay } = PLAN_LIMITS[plan];
        return [plan, { minute: limiter('m', perMinute, MINUTE), day: perDay === null ? null : limiter('d', perDay, DAY) }];
      }),
    ) as TeamLimits['perPlan'];
  }

  /** Counts one request of the team; the day window is only charged when the minute window admits it. */
  async consume(teamId: string, plan: Plan): Promise<LimitDecision> {
    const limiters = this.perPlan[plan];
    const limit = PLAN_LIMITS[plan].perMinute;
    const minute = await take(limiters.minute, teamId);
    const resetSeconds = seconds(minute.res.msBeforeNext);
    if (!minute.allowed) {
      return { allowed: false, limit, remaining: 0, resetSeconds, window: 'minute', retryAfterSeconds: resetSeconds };
    }
    if (!limiters.day) return { allowed: true, limit, remaining: minute.res.remainingPoints, resetSeconds };
    const day = await take(limiters.day, teamId);
    const remaining = Math.min(minute.res.remainingPoints, day.res.remainingPoints);
    if (!day.allowed) {
      return { allowed: false, limit, remaining: 0, resetSeconds, window: 'day', retryAfterSeconds: seconds(day.res.msBeforeNext) };
    }
    return { allowed: true, limit, remaining, resetSeconds };
  }
}
