// The bench run's private resources (FerretDB and its PostgreSQL database, vhost, Redis
// key prefix, temporary directory, test CA), the systems started on them, and the
// clean-up that removes every one of them.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { addVhost, deleteVhost, ensureRabbitmq, ensureRedis } from '../local-servers.ts';
import { freePortBlock, startSystem } from '../system.ts';
import {
  createTestTls,
  dropPostgresDatabase,
  internalPort,
  portBlockSize,
  serviceUrls,
  startFerretdb,
  type RunningStore,
} from './internals.ts';
import { THIS_TREE, processes, type Bench, type System, type Tree } from './support.ts';
import { setOwnStore } from './machine-load.ts';

/** What the run made, as far as it got: the clean-up removes it. */
interface RunResources {
  dir: string;
  vhost: string;
  redisPrefix: string;
  pgDatabase: string;
  running: Set<ChildProcess>;
  /** Systems being started: the clean-up waits for them, then stops them with the others. */
  starting: Set<Promise<ChildProcess>>;
  commands: Set<ChildProcess>;
  store: RunningStore | undefined;
  vhostAdded: boolean;
  cleaning: Promise<void> | undefined;
  finalizers: (() => Promise<unknown>)[];
}

/** What every system of the run is given besides its tree and port. */
interface SystemSettings {
  store: RunningStore;
  amqpUrl: string;
  redisPrefix: string;
  token: string;
  caBundle: string;
  webhookSecretKey: string;
}

/**
 * The run's private resources, and a cleanUp that stops every system still running
 * and removes all of them (FerretDB and its PostgreSQL database, vhost, Redis keys,
 * temporary directory). Safe to call more than once, and after a partial start.
 */
export async function openBench(baseline: string | undefined): Promise<{ bench: Bench; cleanUp: () => Promise<void> }> {
  const run = `${Date.now().toString(36)}${process.pid.toString(36)}`;
  const r: RunResources = {
    dir: mkdtempSync(join(tmpdir(), `lpm-bench-${run}-`)),
    vhost: `lpm-bench-${run}`,
    redisPrefix: `lpm-bench-${run}:`,
    pgDatabase: `lpm_bench_${run}`,
    running: new Set(),
    starting: new Set(),
    commands: new Set(),
    store: undefined,
    vhostAdded: false,
    cleaning: undefined,
    finalizers: [],
  };
  const cleanUp = () => (r.cleaning ??= cleanUpRun(r));

  try {
    // A throwaway CA and a certificate for 127.0.0.1, for the webhook receivers: the
    // system trusts the CA through NODE_EXTRA_CA_CERTS (the CA plus the bundle already
    // set there), and startHttpsReceiver reads the certificate from LPM_TEST_TLS_DIR.
    const tls = createTestTls(join(r.dir, 'tls'), process.env.NODE_EXTRA_CA_CERTS);
    process.env.LPM_TEST_TLS_DIR = tls.dir;
    await Promise.all([ensureRabbitmq(), ensureRedis()]);
    const store = (r.store = await startFerretdb({ dataDir: join(r.dir, 'ferretdb'), database: r.pgDatabase }));
    setOwnStore({ ferretdbPid: store.pid, database: r.pgDatabase });
    addVhost(r.vhost);
    r.vhostAdded = true;
    const settings: SystemSettings = {
      store,
      amqpUrl: `amqp://guest:guest@127.0.0.1:5672/${encodeURIComponent(r.vhost)}`,
      redisPrefix: r.redisPrefix,
      token: randomBytes(32).toString('hex'),
      caBundle: tls.caBundle,
      webhookSecretKey: randomBytes(32).toString('base64'),
    };
    return { bench: benchOf(r, settings, baseline), cleanUp };
  } catch (e) {
    await cleanUp();
    throw e;
  }
}

/** The sections' view of the run: its resources, its systems (this checkout's started on first use), its figures. */
function benchOf(r: RunResources, settings: SystemSettings, baseline: string | undefined): Bench {
  const start = (tree: Tree, env: NodeJS.ProcessEnv = {}) => startRunSystem(r, settings, tree, env);
  let main: Promise<System> | undefined;
  const bench: Bench = {
    store: settings.store,
    dir: r.dir,
    vhost: r.vhost,
    amqpUrl: settings.amqpUrl,
    token: settings.token,
    baseline,
    commands: r.commands,
    stopping: () => r.cleaning !== undefined,
    system: () => (main ??= start(THIS_TREE)),
    start,
    figures: [],
    closing: [],
    atCleanUp: (fn) => void r.finalizers.push(fn),
    values: {},
    record(key, value) {
      if (Number.isFinite(value)) bench.values[key] = value;
      else console.log(`  (no figure for ${key}: ${value})`);
    },
  };
  return bench;
}

function systemEnv(s: SystemSettings, tree: Tree, port: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    MONGO_URL: s.store.url,
    // This checkout's launcher then gives each process its share of the local store's connections, as `npm start` does.
    LOCAL_STORE_PORT: String(s.store.port),
    MONGO_DB_PREFIX: tree.dbPrefix,
    AMQP_URL: s.amqpUrl,
    AMQP_EXCHANGE: tree.exchange,
    REDIS_KEY_PREFIX: s.redisPrefix,
    INTERNAL_TOKEN: s.token,
    LOG_LEVEL: 'warn',
    NODE_EXTRA_CA_CERTS: s.caBundle,
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_SECRET_KEY: s.webhookSecretKey,
    // Every request of the bench comes from one address: its runs of a keyless route (gateway.openapi_yaml) are not the limit's to stop.
    PUBLIC_RATE_LIMIT: '1000000',
  };
  // The webhooks service's own defaults (timeout, attempts at once, retry delays), and
  // no deactivation e-mail leaves the machine.
  for (const name of ['WEBHOOK_TIMEOUT_MS', 'WEBHOOK_CONCURRENCY', 'WEBHOOK_RETRY_DELAYS', 'SMTP_URL'])
    delete env[name];
  return env;
}

/** A system of `tree` on the run's resources, on a free block of ports (tried up to three times). */
async function startRunSystem(
  r: RunResources,
  settings: SystemSettings,
  tree: Tree,
  env: NodeJS.ProcessEnv,
): Promise<System> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePortBlock();
    const launching = startSystem({ ...systemEnv(settings, tree, port), ...env }, 90_000, tree.root).then(
      (proc) => (r.running.add(proc), proc),
    );
    r.starting.add(launching);
    let proc: ChildProcess;
    try {
      proc = await launching;
    } catch (e) {
      endOrphans(r.redisPrefix);
      // Free when checked, taken before a service listened (other processes pick ports
      // too), or slow to become healthy on a busy machine: again on another block.
      const taken = String(e).includes('EADDRINUSE');
      if (r.cleaning || attempt >= 3 || !(taken || String(e).includes('did not become healthy'))) throw e;
      console.log(
        taken
          ? `  a port of ${port}-${port + portBlockSize() - 1} was taken while the system started; starting it again on other ports`
          : '  the system did not become healthy in time (a busy machine?); starting it again',
      );
      continue;
    } finally {
      r.starting.delete(launching);
    }
    if (r.cleaning) throw new Error('the bench is stopping'); // the clean-up stops this system too
    return {
      tree,
      gatewayUrl: `http://127.0.0.1:${port}`,
      gatewayInternalUrl: `http://127.0.0.1:${internalPort(port)}`,
      serviceUrls: serviceUrls(port),
      pid: proc.pid!,
      stop: () => stopProcess(r, proc),
    };
  }
}

async function stopProcess(r: RunResources, proc: ChildProcess): Promise<void> {
  r.running.delete(proc);
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((done) => proc.once('exit', done));
  proc.kill('SIGTERM'); // the launcher stops its services, then exits
  await exited;
}

async function cleanUpRun(r: RunResources): Promise<void> {
  for (const fn of r.finalizers) await step('closing what a scenario kept open', fn);
  await step('ending the operator CLI processes', () => Promise.all([...r.commands].map(endCommand)));
  await step('stopping the systems', async () => {
    await Promise.allSettled([...r.starting]);
    await Promise.all([...r.running].map((proc) => stopProcess(r, proc)));
    endOrphans(r.redisPrefix);
  });
  if (r.store) await step('stopping FerretDB', () => r.store!.stop());
  await step('dropping the PostgreSQL database', () => dropPostgresDatabase(r.pgDatabase));
  if (r.vhostAdded) await step('deleting the vhost', () => deleteVhost(r.vhost));
  await step('deleting the Redis keys', () => deleteRedisKeys(r.redisPrefix));
  rmSync(r.dir, { recursive: true, force: true });
}

/** One step of the clean-up: a failure is reported, and the next steps still run. */
async function step(what: string, fn: () => unknown): Promise<void> {
  try {
    await fn();
  } catch (e) {
    console.error(`bench clean-up: ${what} failed: ${(e as Error).message}`);
  }
}

async function endCommand(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((done) => child.once('exit', done));
  child.kill('SIGTERM');
  const stubborn = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(stubborn);
}

async function deleteRedisKeys(prefix: string): Promise<void> {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { lazyConnect: true });
  try {
    await redis.connect();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}

/**
 * Ends the services and gateway a launcher left behind: startSystem kills a launcher
 * that did not get ready with SIGKILL, which leaves its children running under init.
 * They are found by this run's Redis key prefix in their environment.
 */
function endOrphans(redisPrefix: string): void {
  for (const { pid, ppid } of processes()) {
    if (ppid !== 1) continue;
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`REDIS_KEY_PREFIX=${redisPrefix}`))
        process.kill(pid, 'SIGTERM');
    } catch {
      // exited meanwhile, or not ours to read
    }
  }
}
