// A webhook's `rate_limit` across replicas, in Redis, in two scripts (each atomic, on
// Redis's clock). `reserve` schedules: each delivery takes the next free instant of its
// webhook, 1000 / rate_limit ms after the last one, and waits until then (never
// refused, so deliveries above the rate wait in line and none is dropped). `admit` is
// the guarantee, asked just before the POST: the webhook's last POST, on any replica,
// was a spacing ago or more, or how long until it is. Spaced POSTs, not a second's
// worth at once, so a receiver that takes them in a little late still never sees more
// than its limit in a second. Only webhooks with a rate_limit pay the round trips.
import type { Redis } from 'ioredis';

const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

const RESERVE = `${NOW}
local nextFree = tonumber(redis.call('GET', KEYS[1]) or '0')
if nextFree < now then nextFree = now end
local after = nextFree + tonumber(ARGV[1])
redis.call('SET', KEYS[1], tostring(after), 'PX', math.ceil(after - now) + 1000)
return math.floor(nextFree - now)
`;

// Only asks: an attempt told to wait holds no place (it may go back to the queue).
const ADMIT = `${NOW}
local spacing = tonumber(ARGV[1])
local last = tonumber(redis.call('GET', KEYS[1]) or '')
if last == nil or now - last >= spacing then
  redis.call('SET', KEYS[1], tostring(now), 'PX', math.ceil(spacing) + 1000)
  return 0
end
return math.ceil(last + spacing - now)
`;

export class RateReservations {
  private readonly redis: Redis;
  private readonly prefix: string;

  constructor(redis: Redis, keyPrefix: string) {
    this.redis = redis;
    this.prefix = `${keyPrefix}webhooks:rate:`;
  }

  /** How long from now (ms) until the webhook's reserved turn; throws while Redis cannot tell. */
  async reserve(webhookId: string, perSecond: number): Promise<number> {
    return Number(await this.redis.eval(RESERVE, 1, this.prefix + webhookId, String(1000 / perSecond)));
  }

  /** 0 when a POST may go now (it is then the webhook's last); else ms until it may. Throws while Redis cannot tell. */
  async admit(webhookId: string, perSecond: number): Promise<number> {
    return Number(await this.redis.eval(ADMIT, 1, `${this.prefix}sent:${webhookId}`, String(1000 / perSecond)));
  }
}
