// What the drill makes and must remove however it ends (its verdict, an error, SIGINT
// or SIGTERM): its system, its FerretDB and database, its vhost or its RabbitMQ cluster,
// its Redis keys, its files. Each is noted when made; removal runs once, whoever asks first, in a fixed
// order, each step on its own (one that fails does not keep the others from running).
import { rmSync } from 'node:fs';
import { Redis } from 'ioredis';
import { dropPostgresDatabase, type RunningStore } from '../local-store.ts';
import { deleteVhost } from '../local-servers.ts';
import type { Launcher } from '../system.ts';
import { downCluster, type Cluster } from '../cluster/cluster.ts';
import { stopChildren, stopSystem } from './launcher.ts';

export class DrillResources {
  launcher?: Launcher;
  store?: RunningStore;
  /** The PostgreSQL database of its FerretDB. */
  database?: string;
  vhost?: string;
  /** Its own RabbitMQ cluster (--cluster): every node stopped, its files removed. */
  cluster?: Cluster;
  /** Every Redis key of the run begins with it. */
  redisPrefix?: string;
  /** The receiver and the proxies. */
  readonly closers: (() => Promise<unknown>)[] = [];
  private removal?: Promise<void>;
  private readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  remove(): Promise<void> {
    return (this.removal ??= this.removeAll());
  }

  /** Whether removal has begun (the launcher's end is then the drill's own doing). */
  get removing(): boolean {
    return this.removal !== undefined;
  }

  private async removeAll(): Promise<void> {
    const steps: [string, () => unknown][] = [
      ['the system', () => this.launcher && stopSystem(this.launcher)],
      ['child processes', () => stopChildren()],
      ['the receiver and the proxies', () => Promise.all(this.closers.map((close) => close()))],
      ['Redis keys', () => this.redisPrefix && deleteRedisKeys(this.redisPrefix)],
      ['the vhost', () => this.vhost && deleteVhost(this.vhost)],
      ['the RabbitMQ cluster', () => this.cluster && downCluster(this.cluster)],
      ['FerretDB', () => this.store?.stop()],
      ['the database', () => this.database && dropPostgresDatabase(this.database)],
      ['files', () => rmSync(this.dir, { recursive: true, force: true })],
    ];
    for (const [what, step] of steps) {
      try {
        await step();
      } catch (e) {
        console.error(`drill clean-up, ${what}: ${(e as Error).message}`);
      }
    }
  }
}

async function deleteRedisKeys(prefix: string): Promise<void> {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  try {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}
