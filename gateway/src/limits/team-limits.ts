// Per-team request limits (docs/decisions.md §7): a minute and a day window per plan,
// counted in Redis so every gateway replica shares them (counters.ts).
import { PLAN_LIMITS, PLANS, type Plan } from '../contract/plans.ts';
import { seconds, type Counters, type Window } from './counters.ts';

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

const MINUTE = 60;
const DAY = 86_400;

export interface TeamLimitsOptions {
  counters: Counters;
}

export class TeamLimits {
  private readonly counters: Counters;
  /** Each plan's windows, minute first. All plans count under the same keys: a plan change only changes the limit the next request is compared with, not its count. */
  private readonly perPlan: Record<Plan, Window[]>;

  constructor(opts: TeamLimitsOptions) {
    this.counters = opts.counters;
    this.perPlan = Object.fromEntries(
      PLANS.map((plan) => {
        const { perMinute, perDay } = PLAN_LIMITS[plan];
        const minute: Window = { name: 'rl:m', points: perMinute, durationSeconds: MINUTE };
        return [plan, perDay === null ? [minute] : [minute, { name: 'rl:d', points: perDay, durationSeconds: DAY }]];
      }),
    ) as Record<Plan, Window[]>;
  }

  /** Counts one request of the team; the day window is only charged when the minute window admits it. */
  async consume(teamId: string, plan: Plan): Promise<LimitDecision> {
    const [minute, day] = await this.counters.charge(this.perPlan[plan], teamId);
    const limit = PLAN_LIMITS[plan].perMinute;
    const resetSeconds = seconds(minute.msBeforeNext);
    if (!minute.allowed) {
      return { allowed: false, limit, remaining: 0, resetSeconds, window: 'minute', retryAfterSeconds: resetSeconds };
    }
    if (!day) return { allowed: true, limit, remaining: minute.remaining, resetSeconds };
    if (!day.allowed) {
      return {
        allowed: false,
        limit,
        remaining: 0,
        resetSeconds,
        window: 'day',
        retryAfterSeconds: seconds(day.msBeforeNext),
      };
    }
    return { allowed: true, limit, remaining: Math.min(minute.remaining, day.remaining), resetSeconds };
  }
}
