// Per-team request limits (decisions §7): a minute and a day window per plan,
// counted in Redis so every gateway replica shares them. Fixed windows start at
// the team's first request (the limiter's SET NX EX). Counting is one atomic
// INCRBY per window, so N allowed means exactly N under concurrency.
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type IRateLimiterOptions } from 'rate-limiter-flexible';
import { PLAN_LIMITS, PLANS, type Plan } from '../domain/plans.ts';

export interface LimitsLogger {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

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

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** In-process counters used while Redis is unreachable; tells its owner each time it is used. */
class FallbackLimiter extends RateLimiterMemory {
  private readonly onUse: () => void;

  constructor(opts: IRateLimiterOptions, onUse: () => void) {
    super(opts);
    this.onUse = onUse;
  }

  consume(key: string | number, points?: number, options?: { [key: string]: unknown }): Promise<RateLimiterRes> {
    this.onUse();
    return super.consume(key, points, options);
  }
}

export interface TeamLimitsOptions {
  redis: Redis;
  /** Prefix of every Redis key (REDIS_KEY_PREFIX). */
  keyPrefix: string;
  logger: LimitsLogger;
}

export class TeamLimits {
  private readonly perPlan: Record<Plan, { minute: WindowLimiter; day: WindowLimiter | null }>;
  private readonly logger: LimitsLogger;
  private readonly redis: Redis;
  private degraded = false;
  private readonly onReady = () => {
    if (!this.degraded) return;
    this.degraded = false;
    this.logger.info({}, 'Redis reachable again: rate limits are shared again');
  };
  // Also keeps ioredis from printing unhandled connection errors to stderr.
  private readonly onError = (err: Error) => this.noteFallback(err);

  constructor(opts: TeamLimitsOptions) {
    this.logger = opts.logger;
    this.redis = opts.redis;
    this.redis.on('ready', this.onReady);
    this.redis.on('error', this.onError);
    const onFallback = () => this.noteFallback();
    // One limiter per plan and window, all on the same keys: a plan change only
    // changes the limit the next request is compared with, not its count.
    const limiter = (window: 'm' | 'd', points: number, duration: number): WindowLimiter => {
      const keyPrefix = `${opts.keyPrefix}rl:${window}`;
      return new RateLimiterRedis({
        storeClient: opts.redis,
        keyPrefix,
        points,
        duration,
        rejectIfRedisNotReady: true,
        insuranceLimiter: new FallbackLimiter({ keyPrefix, points, duration }, onFallback),
      });
    };
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

  /** Call once the Redis client is closed. */
  close(): void {
    this.redis.off('ready', this.onReady);
    this.redis.off('error', this.onError);
  }

  private noteFallback(err?: Error): void {
    if (this.degraded) return;
    this.degraded = true;
    this.logger.warn({ redis_status: this.redis.status, err }, 'Redis unreachable: rate limits use in-process counters');
  }
}

async function take(limiter: WindowLimiter, key: string): Promise<{ allowed: boolean; res: RateLimiterRes }> {
  try {
    return { allowed: true, res: await limiter.consume(key) };
  } catch (e) {
    if (e instanceof RateLimiterRes) return { allowed: false, res: e };
    throw e;
  }
}
