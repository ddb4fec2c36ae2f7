// The whole system as an operator runs it (`npm start`'s launcher on a free block
// of ports, the operator CLI), for tests that go through the gateway.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { freePortBlock, startSystem, type Launcher } from '../../scripts/system.ts';
import { portBlockSize } from '@lpm/shared/service/port-layout';
import { teamCreateArgs } from './cli.ts';
import { contract } from './contract.ts';
import type { JsonAnswer } from './json.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

export type Envelope<T = JsonAnswer> = {
  success: boolean;
  data: T;
  pagination?: { page: number; limit: number; total: number; pages: number };
  error: { code: string; message: string; details: Record<string, unknown> };
};

export interface IssuedTeam {
  team: { id: string; name: string; plan: string; timezone: string };
  user: { id: string; name: string; email: string };
  api_key: string;
  key_id: string;
}

export interface RunningSystem {
  base: number;
  env: NodeJS.ProcessEnv;
  launcher: Launcher;
  /** The pid the launcher last printed for `name` (`[start] <name> pid <pid>`); throws when it printed none. */
  pidOf(name: string): number;
  /** `npm run admin -- ...args --json`: its JSON output, or throws with its stderr. */
  admin(...args: string[]): JsonAnswer;
  /** A team on the enterprise plan (so long suites stay under the minute limit), with its owner's key. */
  team(name?: string, ...extra: string[]): IssuedTeam;
  request(path: string, init?: RequestInit & { key?: string }): Promise<Response>;
  /** A JSON request whose answer must match the OpenAPI document (test-kit/src/contract.ts), or it throws. */
  call<T = JsonAnswer>(
    key: string,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: Envelope<T>; headers: Headers }>;
  stop(): Promise<void>;
}

let teams = 0;

export interface SystemOptions {
  /** `npm start -- --replicas ...`: e.g. `cases=2,webhooks=2`. */
  replicas?: string;
  /** Ports the further replicas need beyond the system's block. */
  extraPorts?: number;
}

/** The settings `npm start` gets for a suite's system: its own databases, Redis keys and exchange under `name`, from port `base` on. */
export function systemEnv(name: string, base: number, extraEnv: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const run = `${process.env.MONGO_DB_PREFIX}${name}_`;
  return {
    ...process.env,
    PORT: String(base),
    MONGO_DB_PREFIX: run,
    REDIS_KEY_PREFIX: `${process.env.REDIS_KEY_PREFIX}${name}:`,
    AMQP_EXCHANGE: `${run}events`,
    LOG_LEVEL: 'warn',
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
    ...extraEnv,
  };
}

/** `name` keeps this suite's databases, Redis keys and exchange apart from other suites of the run. */
export async function startRunningSystem(
  name: string,
  extraEnv: NodeJS.ProcessEnv = {},
  options: SystemOptions = {},
): Promise<RunningSystem> {
  // A port found free can still be taken before the launcher listens on it: then again, elsewhere.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnFreePorts(name, extraEnv, options);
    } catch (e) {
      if (attempt >= 3 || !String(e).includes('EADDRINUSE')) throw e;
    }
  }
}

async function startOnFreePorts(
  name: string,
  extraEnv: NodeJS.ProcessEnv,
  options: SystemOptions,
): Promise<RunningSystem> {
  const base = await freePortBlock(portBlockSize(options.extraPorts));
  const env = systemEnv(name, base, extraEnv);
  const launcher = await startSystem(
    env,
    undefined,
    undefined,
    options.replicas ? ['--replicas', options.replicas] : [],
  );
  const admin = (...args: string[]) => {
    const res = spawnSync(process.execPath, ['gateway/src/cli/main.ts', ...args, '--json'], {
      cwd: root,
      env,
      encoding: 'utf8',
    });
    if (res.status !== 0) throw new Error(`admin ${args.join(' ')} failed: ${res.stderr}`);
    return JSON.parse(res.stdout);
  };
  const request = (path: string, init: RequestInit & { key?: string } = {}) =>
    fetch(`http://127.0.0.1:${base}${path}`, {
      ...init,
      headers: {
        'content-type': 'application/json',
        ...(init.key ? { authorization: `Bearer ${init.key}` } : {}),
        ...(init.headers as Record<string, string>),
      },
    });
  return {
    base,
    env,
    launcher,
    pidOf(processName) {
      const pids = [...launcher.output().matchAll(new RegExp(`\\[start\\] ${processName} pid (\\d+)`, 'g'))].map((m) =>
        Number(m[1]),
      );
      if (!pids.length) throw new Error(`the launcher printed no pid for ${processName}`);
      return pids[pids.length - 1];
    },
    admin,
    team(teamName, ...extra) {
      const n = ++teams;
      teamName ??= `Team ${n}`;
      return admin(
        ...teamCreateArgs({
          name: teamName,
          plan: 'enterprise',
          ownerName: `Owner of ${teamName}`,
          ownerEmail: `owner${n}@${name}.example`,
        }),
        ...extra,
      );
    },
    request,
    async call(key, method, path, body) {
      const res = await request(path, { method, key, body: body === undefined ? undefined : JSON.stringify(body) });
      const answer = (await res.json()) as Envelope;
      const problem = contract().check(method, path, res.status, answer);
      if (problem)
        throw new Error(`the answer does not match openapi/openapi.json: ${problem}\n${JSON.stringify(answer)}`);
      return { status: res.status, body: answer, headers: res.headers };
    },
    async stop() {
      if (launcher.exitCode !== null || launcher.signalCode !== null) return;
      const exited = new Promise((done) => launcher.once('exit', done));
      launcher.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * A running system for a suite: started before its tests, handed to `ready` (which
 * keeps it and issues what the tests share), and stopped after them.
 */
export function systemForSuite(
  name: string,
  extraEnv: NodeJS.ProcessEnv,
  ready: (sys: RunningSystem) => void | Promise<void>,
): void {
  let sys: RunningSystem | undefined;
  beforeAll(async () => {
    sys = await startRunningSystem(name, extraEnv);
    await ready(sys);
  }, 120_000);
  afterAll(async () => {
    await sys?.stop();
  });
}
