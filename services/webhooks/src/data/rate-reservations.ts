// A webhook's `rate_limit` across replicas, in Redis: each delivery reserves the
// next free instant of its webhook, 1000 / rate_limit ms after the last one, in one
// script (atomic, on Redis's clock), and waits until then. A reservation is taken
// once per attempt and never refused, so deliveries above the rate wait in line,
// none is dropped; and only webhooks with a rate_limit pay the round trip.
import type { Redis } from 'ioredis';

const RESERVE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local nextFree = tonumber(redis.call('GET', KEYS[1]) or '0')
if nextFree < now then nextFree = now end
local after = nextFree + tonumber(ARGV[1])
redis.call('SET', KEYS[1], tostring(after), 'PX', math.ceil(after - now) + 1000)
return math.floor(nextFree - now)
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
}
