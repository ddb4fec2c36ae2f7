import { rmSync } from 'node:fs';
import { Redis } from 'ioredis';
import { dropPostgresDatabase, type RunningStore } from '../scripts/local-store.ts';
import { deleteVhost, stopRabbitmq, stopRedis } from '../scripts/local-servers.ts';

export default async function globalTeardown(): Promise<void> {
  const store = (globalThis as Record<string, unknown>).__lpmStore as RunningStore | null;
  await store?.stop();
  if (process.env.LPM_TEST_PG_DATABASE) await dropPostgresDatabase(process.env.LPM_TEST_PG_DATABASE);
  if (process.env.AMQP_VHOST) deleteVhost(process.env.AMQP_VHOST);
  const prefix = process.env.REDIS_KEY_PREFIX;
  if (prefix) {
    const redis = new Redis(process.env.REDIS_URL!);
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
    redis.disconnect();
  }
  if (process.env.LPM_TEST_DIR) rmSync(process.env.LPM_TEST_DIR, { recursive: true, force: true });
  const toStop = (process.env.LPM_TEST_STOP_SERVERS ?? '').split(',');
  if (toStop.includes('rabbitmq')) stopRabbitmq();
  if (toStop.includes('redis')) stopRedis();
}
