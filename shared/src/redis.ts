// A Redis client for what falls back when Redis is away (the gateway's rate limits,
// the webhooks service's subscription versions): no offline queue and short
// timeouts, so a command fails at once instead of holding a request until Redis
// returns. Commands sent while one turn of the event loop handles several requests
// go out in one write (auto-pipelining), not one system call each.
import { Redis } from 'ioredis';

export function createRedis(url: string, connectionName: string): Redis {
  return new Redis(url, {
    enableOfflineQueue: false,
    enableAutoPipelining: true,
    maxRetriesPerRequest: 0,
    commandTimeout: 500,
    connectTimeout: 2000,
    retryStrategy: (times) => Math.min(times * 200, 2000),
    connectionName,
  });
}

/** Resolves when the client is ready, or after timeoutMs (what uses it works without Redis). */
export function redisReady(redis: Redis, timeoutMs: number): Promise<boolean> {
  if (redis.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      resolve(ok);
    };
    const onReady = () => done(true);
    const timer = setTimeout(() => done(false), timeoutMs);
    redis.once('ready', onReady);
  });
}

export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'ready') {
    await redis.quit().catch(() => redis.disconnect());
  } else {
    redis.disconnect();
  }
}
