// Fixed-window counters in Redis, so every gateway replica shares them, counted in
// process while Redis is unreachable. The team limits and the failed-authentication
// throttle both count here: one Redis client, one key prefix (REDIS_KEY_PREFIX) and
// one warning per outage. A window starts at a key's first point (the limiter's
// SET NX EX); counting is one atomic INCRBY, so N allowed means exactly N under concurrency.
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type IRateLimiterOptions } from 'rate-limiter-flexible';

export interface LimitsLogger {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/** Whole seconds to wait, at least one (Retry-After, RateLimit-Reset). */
export const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

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

export interface CountersOptions {
  redis: Redis;
  /** Prefix of every Redis key (REDIS_KEY_PREFIX). */
  keyPrefix: string;
  logger: LimitsLogger;
}

export class Counters {
  private readonly logger: LimitsLogger;
  private readonly redis: Redis;
  private readonly keyPrefix: string;
  private degraded = false;
  private readonly onReady = () => {
    if (!this.degraded) return;
    this.degraded = false;
    this.logger.info({}, 'Redis reachable again: rate limits are shared again');
  };
  // Also keeps ioredis from printing unhandled connection errors to stderr.
  private readonly onError = (err: Error) => this.noteFallback(err);
  private readonly onFallback = () => this.noteFallback();

  constructor(opts: CountersOptions) {
    this.logger = opts.logger;
    this.redis = opts.redis;
    this.keyPrefix = opts.keyPrefix;
    this.redis.on('ready', this.onReady);
    this.redis.on('error', this.onError);
  }

  /** Counters under `<REDIS_KEY_PREFIX><name>:<key>`, `points` per window of `durationSeconds`. */
  window(name: string, points: number, durationSeconds: number): RateLimiterRedis {
    const keyPrefix = `${this.keyPrefix}${name}`;
    return new RateLimiterRedis({
      storeClient: this.redis,
      keyPrefix,
      points,
      duration: durationSeconds,
      rejectIfRedisNotReady: true,
      insuranceLimiter: new FallbackLimiter({ keyPrefix, points, duration: durationSeconds }, this.onFallback),
    });
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

/** One point of `key`: allowed, or refused with the window's state (the limiter rejects with a RateLimiterRes). */
export async function take(
  limiter: { consume(key: string): Promise<RateLimiterRes> },
  key: string,
): Promise<{ allowed: boolean; res: RateLimiterRes }> {
  try {
    return { allowed: true, res: await limiter.consume(key) };
  } catch (e) {
    if (e instanceof RateLimiterRes) return { allowed: false, res: e };
    throw e;
  }
}
