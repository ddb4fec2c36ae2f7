import { rmSync } from 'node:fs';
import { Redis } from 'ioredis';
import { dropPostgresDatabase, type RunningStore } from '../scripts/local-store.ts';
import { stopRabbitmq, stopRedis } from '../scripts/local-servers.ts';
import { downCluster, readCluster } from '../scripts/cluster/cluster.ts';

export default async function globalTeardown(): Promise<void> {
  const store = (globalThis as Record<string, unknown>).__lpmStore as RunningStore | null;
  await store?.stop();
  if (process.env.LPM_TEST_PG_DATABASE) await dropPostgresDatabase(process.env.LPM_TEST_PG_DATABASE);
  const broker = process.env.LPM_TEST_BROKER_ROOT && readCluster(process.env.LPM_TEST_BROKER_ROOT);
  if (broker) await downCluster(broker);
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
