// Two (or more) replicas of one domain service as processes on one database and
// broker, for the exactly-once tests of time-driven work: each replica runs the
// sweep every 250 ms, and requests go to the first as the gateway would send them.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { identityHeaders, type Identity } from '@lpm/shared/identity';
import { isListening } from '../../scripts/local-store.ts';
import type { ServiceName } from '@lpm/shared/service/names';
import { freePortBlock } from '../../scripts/system.ts';
import { waitFor } from './wait.ts';
import type { JsonAnswer } from './json.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface Replicas {
  /** The first replica's port; the others follow it. */
  readonly base: number;
  /** The exchange the replicas publish to (tap it before writing). */
  readonly exchange: string;
  /** The prefix of the replicas' database names (MONGO_DB_PREFIX): their database is this and the service's name. */
  readonly dbPrefix: string;
  /** A request to the first replica for `who`, as the gateway sends it. */
  send(
    who: Identity,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: { data: JsonAnswer } }>;
  stop(): Promise<void>;
}

/** Prepares names first (`exchange`), so a test can tap the exchange before the replicas start with `start()`. */
export async function replicasOf(
  service: ServiceName,
  name: string,
  count = 2,
): Promise<Replicas & { start(env?: NodeJS.ProcessEnv): Promise<void> }> {
  const base = await freePortBlock(count);
  const prefix = `${process.env.MONGO_DB_PREFIX}${name}_`;
  const exchange = `${prefix}events`;
  const token = randomBytes(32).toString('hex');
  let processes: ChildProcess[] = [];
  return {
    base,
    exchange,
    dbPrefix: prefix,
    async start(env = {}) {
      processes = Array.from({ length: count }, (_, i) =>
        spawn(process.execPath, [`services/${service}/src/server.ts`], {
          cwd: root,
          stdio: ['ignore', 'ignore', 'inherit'],
          env: {
            ...process.env,
            PORT: String(base + i),
            MONGO_DB_PREFIX: prefix,
            AMQP_EXCHANGE: exchange,
            INTERNAL_TOKEN: token,
            SCHEDULER_INTERVAL: '250ms',
            LOG_LEVEL: 'warn',
            ...env,
          },
        }),
      );
      await waitFor(
        `${count} replicas of ${service}`,
        async () => (await Promise.all(processes.map((_, i) => isListening(base + i)))).every(Boolean),
        30_000,
      );
    },
    async send(who, method, path, body) {
      const res = await fetch(`http://127.0.0.1:${base}${path}`, {
        method,
        headers: { ...identityHeaders(who, token), 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as { data: JsonAnswer } };
    },
    async stop() {
      await Promise.all(
        processes.map(
          (p) => new Promise((done) => (p.exitCode !== null ? done(null) : (p.once('exit', done), p.kill('SIGTERM')))),
        ),
      );
    },
  };
}
