// Fixed-window counters in Redis, so every gateway replica shares them, counted in
// process while Redis is unreachable. The team limits and the failed-authentication
// throttle both count here: one Redis client, one key prefix (REDIS_KEY_PREFIX) and
// one warning per outage. A window starts at a key's first point (SET NX EX);
// counting is an atomic INCRBY, so N allowed means exactly N under concurrency.
//
// A request charges all its windows (a team's minute and day) in one round trip: one
// script counts them in turn and stops after the first that refuses, so a later
// window is only charged when the earlier ones admit the request.
import type { Redis } from 'ioredis';
import { RateLimiterMemory } from 'rate-limiter-flexible';

export interface LimitsLogger {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/** Whole seconds to wait, at least one (Retry-After, RateLimit-Reset). */
export const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** Points per window of durationSeconds, counted under `<REDIS_KEY_PREFIX><name>:<key>`. */
export interface Window {
  name: string;
  points: number;
  durationSeconds: number;
}

/** A window's state once a request was counted in it. */
export interface WindowCount {
  allowed: boolean;
  remaining: number;
  msBeforeNext: number;
}

// KEYS: the windows' keys; ARGV: the increment, then each window's points and duration (seconds).
const CHARGE_SCRIPT = `
local increment = tonumber(ARGV[1])
local counts = {}
for i, key in ipairs(KEYS) do
  local points, duration = tonumber(ARGV[2 * i]), tonumber(ARGV[2 * i + 1])
  redis.call('set', key, 0, 'EX', duration, 'NX')
  local consumed = redis.call('incrby', key, increment)
  local ttl = redis.call('pttl', key)
  if ttl == -1 then
    redis.call('expire', key, duration)
    ttl = 1000 * duration
  end
  counts[#counts + 1] = consumed
  counts[#counts + 1] = ttl
  if consumed > points then break end
end
return counts`;

// The number of keys, the keys, then ARGV; the answer is the script's integers.
type ChargeCommand = (...numKeysThenKeysThenArgs: (string | number)[]) => Promise<number[]>;

export interface CountersOptions {
  redis: Redis;
  /** Prefix of every Redis key (REDIS_KEY_PREFIX). */
  keyPrefix: string;
  logger: LimitsLogger;
}

export class Counters {
  private readonly logger: LimitsLogger;
  private readonly redis: Redis;
  private readonly chargeInRedis: ChargeCommand;
  private readonly keyPrefix: string;
  /** In-process counts while Redis is away, per window name (shared by the plans counting under it). */
  private readonly fallbacks = new Map<string, RateLimiterMemory>();
  private readonly limits = new WeakMap<readonly Window[], number[]>();
  private degraded = false;
  private readonly onReady = () => {
    if (!this.degraded) return;
    this.degraded = false;
    this.logger.info({}, 'Redis reachable again: rate limits are shared again');
  };
  // Also keeps ioredis from printing unhandled connection errors to stderr.
  private readonly onError = (err: Error) => this.noteFallback(err);

  constructor(opts: CountersOptions) {
    this.logger = opts.logger;
    this.redis = opts.redis;
    this.keyPrefix = opts.keyPrefix;
    // ioredis runs it by its hash, loading it once per connection when Redis does not know it.
    this.redis.defineCommand('lpmChargeWindows', { lua: CHARGE_SCRIPT });
    const command = (this.redis as unknown as { lpmChargeWindows: ChargeCommand }).lpmChargeWindows;
    this.chargeInRedis = command.bind(this.redis);
    this.redis.on('ready', this.onReady);
    this.redis.on('error', this.onError);
  }

  /**
   * Counts one point of `key` in each window in turn, stopping after the first that
   * refuses: the counts of the windows charged, in order.
   */
  async charge(windows: readonly Window[], key: string): Promise<WindowCount[]> {
    const raw = (await this.inRedis(windows, key, 1)) ?? (await this.inProcess(windows, key, 1));
    const counts: WindowCount[] = [];
    for (let i = 0; i < raw.length; i += 2) {
      const { points } = windows[i / 2];
      counts.push({ allowed: raw[i] <= points, remaining: Math.max(points - raw[i], 0), msBeforeNext: raw[i + 1] });
    }
    return counts;
  }

  /** Gives back a point charged to the window. */
  async refund(window: Window, key: string): Promise<void> {
    if (!(await this.inRedis([window], key, -1))) await this.inProcess([window], key, -1);
  }

  /** Call once the Redis client is closed. */
  close(): void {
    this.redis.off('ready', this.onReady);
    this.redis.off('error', this.onError);
  }

  /** [consumed, msBeforeNext] per window charged, or null when Redis could not count. */
  private async inRedis(windows: readonly Window[], key: string, increment: number): Promise<number[] | null> {
    if (this.redis.status !== 'ready') return null;
    const args: (string | number)[] = [windows.length];
    for (const w of windows) args.push(`${this.keyPrefix}${w.name}:${key}`);
    args.push(increment, ...this.limitsOf(windows));
    try {
      return await this.chargeInRedis(...args);
    } catch (e) {
      this.noteFallback(e as Error);
      return null;
    }
  }

  /** The script's ARGV after the increment: each window's points and duration (made once per list of windows). */
  private limitsOf(windows: readonly Window[]): number[] {
    let limits = this.limits.get(windows);
    if (!limits) this.limits.set(windows, (limits = windows.flatMap((w) => [w.points, w.durationSeconds])));
    return limits;
  }

  private async inProcess(windows: readonly Window[], key: string, increment: number): Promise<number[]> {
    this.noteFallback();
    const counts: number[] = [];
    for (const w of windows) {
      const memory = this.fallback(w);
      const res = increment > 0 ? await memory.penalty(key, increment) : await memory.reward(key, -increment);
      counts.push(res.consumedPoints, res.msBeforeNext);
      if (res.consumedPoints > w.points) break;
    }
    return counts;
  }

  private fallback(w: Window): RateLimiterMemory {
    let memory = this.fallbacks.get(w.name);
    if (!memory)
      this.fallbacks.set(
        w.name,
        (memory = new RateLimiterMemory({ keyPrefix: w.name, points: w.points, duration: w.durationSeconds })),
      );
    return memory;
  }

  private noteFallback(err?: Error): void {
    if (this.degraded) return;
    this.degraded = true;
    this.logger.warn(
      { redis_status: this.redis.status, err },
      'Redis unreachable: rate limits use in-process counters',
    );
  }
}
