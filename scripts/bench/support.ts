// What the bench's sections share: settings, the run's private resources (FerretDB,
// vhost, Redis key prefix, temporary directory, test CA), the systems started on
// them, the broker's count of client.created events, and the table of figures.
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { connect } from 'amqplib';
import { Redis } from 'ioredis';
import { addVhost, deleteVhost, ensureRabbitmq, ensureRedis } from '../local-servers.ts';
import { freePortBlock, startSystem } from '../system.ts';
import { createTestTls, dropPostgresDatabase, startFerretdb, type RunningStore } from './internals.ts';

/** This checkout. */
export const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
export const execFileAsync = promisify(execFile);

export interface Figures {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  created: number;
  /** Responses received (autocannon runs). */
  responses?: number;
}

/** One autocannon or driver run into the JSON figures: `<prefix>_rps`, `_p50_ms`, `_p99_ms`, `_errors`. */
export function recordRun(b: Bench, prefix: string, f: Figures): void {
  b.record(`${prefix}_rps`, f.rps);
  b.record(`${prefix}_p50_ms`, f.p50);
  b.record(`${prefix}_p99_ms`, f.p99);
  b.record(`${prefix}_errors`, f.errors);
}

/** `x / y`, for the ratios of the JSON figures (y = 0 counts as 0.001). */
export const ratioOf = (x: number, y: number) => x / Math.max(y, 0.001);

/** One query through the driver, run one at a time for about DURATION_S (at least twice, at most 200 times): p50 and p99. */
export async function measureRaw(name: string, run: () => Promise<unknown>): Promise<Figures> {
  const times: number[] = [];
  const until = Date.now() + DURATION_S * 1000;
  while (times.length < 2 || (Date.now() < until && times.length < 200)) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const total = times.reduce((a, b) => a + b, 0);
  console.log(`  ${name}: ${times.length} runs, p50 ${quantile(times, 0.5).toFixed(1)} ms, p99 ${quantile(times, 0.99).toFixed(1)} ms`);
  return { name: `${name} (${times.length} runs)`, rps: (times.length * 1000) / total, p50: quantile(times, 0.5), p99: quantile(times, 0.99), errors: 0, created: 0 };
}

export interface Sample {
  ops: number;
  seconds: number;
  /** Each successful operation's ms, sorted. */
  latencies: number[];
  errors: number;
}

/** An operation measured by `drive`. */
export interface Operation<A> {
  /** The operation's input, made before its clock starts. */
  input(i: number): A;
  /** false: the operation did not do its work (a read that found nothing). */
  run(input: A): Promise<boolean>;
}

/**
 * `concurrency` loops in this process running `op` back to back for `seconds` (or
 * `count` operations in all), each operation timed; one that resolves false or throws
 * is an error.
 */
export async function drive<A>(op: Operation<A>, concurrency: number, seconds: number, count = Infinity): Promise<Sample> {
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const started = performance.now();
  const end = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < count && performance.now() < end; i = next++) {
        const input = op.input(i);
        const t = performance.now();
        try {
          if (await op.run(input)) latencies.push(performance.now() - t);
          else errors++;
        } catch {
          errors++;
        }
      }
    }),
  );
  latencies.sort((x, y) => x - y);
  return { ops: latencies.length, seconds: (performance.now() - started) / 1000, latencies, errors };
}

/** Milliseconds as printed: two decimals below 10, none from 100. */
export const ms = (x: number) => (x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : x.toFixed(0));

export function printTable(rows: Figures[]): void {
  console.log('\n| run | req/s | p50 ms | p99 ms | non-2xx or errors |');
  console.log('|---|---:|---:|---:|---:|');
  for (const f of rows) console.log(`| ${f.name} | ${f.rps >= 10 ? f.rps.toFixed(0) : f.rps.toFixed(2)} | ${ms(f.p50)} | ${ms(f.p99)} | ${f.errors} |`);
}

/** A checkout the bench starts, with the database prefix and exchange its system uses. */
export interface Tree {
  label: string;
  root: string;
  dbPrefix: string;
  exchange: string;
}

/** This checkout as the sections after `clients` use it (one system for all of them). */
export const THIS_TREE: Tree = { label: 'this', root: ROOT, dbPrefix: 'bench_', exchange: 'lpm.events' };

export interface System {
  tree: Tree;
  gatewayUrl: string;
  /** The gateway's internal listener (/internal/*), at +7 (scripts/start.ts). */
  gatewayInternalUrl: string;
  /** The launcher puts the services after the gateway's port: deals +1, clients +2, cases +3, activities +4, financial +5. */
  dealsUrl: string;
  clientsUrl: string;
  casesUrl: string;
  activitiesUrl: string;
  financialUrl: string;
  /** ... webhooks +6. */
  webhooksUrl: string;
  /** The launcher's process id (its children are the gateway and the services). */
  pid: number;
  stop(): Promise<void>;
}

export interface Bench {
  store: RunningStore;
  /** The run's temporary directory, removed at the end. */
  dir: string;
  vhost: string;
  amqpUrl: string;
  /** The services' internal credential, for requests straight to a service. */
  token: string;
  /** BENCH_BASELINE: another checkout, measured beside this one by the clients section. */
  baseline: string | undefined;
  /** Operator CLI processes running: the clean-up ends them. */
  commands: Set<ChildProcess>;
  /** True once the clean-up began: start nothing more. */
  stopping(): boolean;
  /** This checkout's system (THIS_TREE), started on first use and kept for the next sections. */
  system(): Promise<System>;
  /** A system of `tree` on the run's store, vhost and key prefix; the caller stops it. */
  start(tree: Tree): Promise<System>;
  /** Rows of the table printed at the end, in the order measured. */
  figures: Figures[];
  /** Other tables printed at the end. */
  closing: (() => void)[];
  /** Runs `fn` at the clean-up, before the systems stop (e.g. closing a scenario's broker connection kept for the next ones). */
  atCleanUp(fn: () => Promise<unknown>): void;
  /** Every figure by its dotted key (`scenario.measure.unit`), written by `--json`. */
  values: Record<string, number>;
  /** Sets one figure of `values`; a value that is not a finite number is reported and left out. */
  record(key: string, value: number): void;
}

/** Ids of the running processes, with their parent's (from /proc/<pid>/stat; the name field may hold spaces, so read after its ')'). */
export function processes(): { pid: number; ppid: number }[] {
  const found: { pid: number; ppid: number }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      found.push({ pid: Number(entry), ppid: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) });
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

/** `gateway`, a service's name, or the script a process runs. */
export function processName(pid: number): string {
  const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  const script = args.find((a) => a.endsWith('.ts')) ?? args[0];
  return /services\/([^/]+)\/src\/server\.ts$/.exec(script)?.[1] ?? (/gateway\/src\/server\.ts$/.test(script) ? 'gateway' : script.split('/').pop()!);
}

/** A bench server in a child process of its own (the bare proxy, the trivial route). */
export interface ChildServer {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts `script` (a file next to this one) with `nodeFlags` and `env` on top of this
 * process's environment, and waits up to 30 s for its `listening <port>` line; the
 * run's cleanup kills it if the bench stops first.
 */
export async function startChildServer(b: Bench, script: string, opts: { nodeFlags?: readonly string[]; env?: NodeJS.ProcessEnv } = {}): Promise<ChildServer> {
  const path = fileURLToPath(new URL(`./${script}`, import.meta.url));
  const proc: ChildProcess = spawn(process.execPath, [...(opts.nodeFlags ?? []), path], { env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  b.commands.add(proc);
  let output = '';
  proc.stdout!.on('data', (d) => (output += d));
  proc.stderr!.on('data', (d) => (output += d));
  const deadline = Date.now() + 30_000;
  let port: string | undefined;
  while (!(port = /listening (\d+)/.exec(output)?.[1])) {
    if (Date.now() > deadline || proc.exitCode !== null) {
      proc.kill('SIGKILL');
      b.commands.delete(proc);
      throw new Error(`${script} did not start:\n${output}`);
    }
    await sleep(50);
  }
  return {
    url: `http://127.0.0.1:${port}`,
    pid: proc.pid!,
    stop: async () => {
      if (proc.exitCode === null && proc.signalCode === null) {
        const exited = new Promise((done) => proc.once('exit', done));
        proc.kill('SIGTERM');
        await exited;
      }
      b.commands.delete(proc);
    },
  };
}

/** CPU time (user + system) a process has used so far, in ms, from /proc/<pid>/stat. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime, fields 14 and 15 of stat(5), in clock ticks (USER_HZ, 100 on Linux).
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
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
      if (readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`REDIS_KEY_PREFIX=${redisPrefix}`)) process.kill(pid, 'SIGTERM');
    } catch {
      // exited meanwhile, or not ours to read
    }
  }
}

/** The commit a checkout is at, and how many tracked files differ from it (read without taking the index lock). */
export function describeTree(root: string): string {
  try {
    const git = (...args: string[]) =>
      execFileSync('git', ['--no-optional-locks', '-C', root, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const changed = git('status', '--porcelain', '--untracked-files=no').split('\n').filter(Boolean).length;
    return `${git('rev-parse', '--short', 'HEAD')}${changed ? ` + ${changed} changed files` : ''}`;
  } catch {
    return 'not a git checkout';
  }
}

/**
 * The run's private resources, and a cleanUp that stops every system still running
 * and removes all of them (FerretDB and its PostgreSQL database, vhost, Redis keys,
 * temporary directory). Safe to call more than once, and after a partial start.
 */
export async function openBench(baseline: string | undefined): Promise<{ bench: Bench; cleanUp: () => Promise<void> }> {
  const run = `${Date.now().toString(36)}${process.pid.toString(36)}`;
  const dir = mkdtempSync(join(tmpdir(), `lpm-bench-${run}-`));
  const vhost = `lpm-bench-${run}`;
  const redisPrefix = `lpm-bench-${run}:`;
  const pgDatabase = `lpm_bench_${run}`;
  const running = new Set<ChildProcess>();
  /** Systems being started: the clean-up waits for them, then stops them with the others. */
  const starting = new Set<Promise<ChildProcess>>();
  const commands = new Set<ChildProcess>();
  let store: RunningStore | undefined;
  let vhostAdded = false;
  let cleaning: Promise<void> | undefined;
  const step = async (what: string, fn: () => unknown) => {
    try {
      await fn();
    } catch (e) {
      console.error(`bench clean-up: ${what} failed: ${(e as Error).message}`);
    }
  };
  const stopProcess = async (proc: ChildProcess) => {
    running.delete(proc);
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((done) => proc.once('exit', done));
    proc.kill('SIGTERM'); // the launcher stops its services, then exits
    await exited;
  };
  const finalizers: (() => Promise<unknown>)[] = [];
  const cleanUp = () =>
    (cleaning ??= (async () => {
      for (const fn of finalizers) await step('closing what a scenario kept open', fn);
      await step('ending the operator CLI processes', () =>
        Promise.all(
          [...commands].map(async (child) => {
            if (child.exitCode !== null || child.signalCode !== null) return;
            const exited = new Promise((done) => child.once('exit', done));
            child.kill('SIGTERM');
            const stubborn = setTimeout(() => child.kill('SIGKILL'), 5000);
            await exited;
            clearTimeout(stubborn);
          }),
        ),
      );
      await step('stopping the systems', async () => {
        await Promise.allSettled([...starting]);
        await Promise.all([...running].map(stopProcess));
        endOrphans(redisPrefix);
      });
      if (store) await step('stopping FerretDB', () => store!.stop());
      await step('dropping the PostgreSQL database', () => dropPostgresDatabase(pgDatabase));
      if (vhostAdded) await step('deleting the vhost', () => deleteVhost(vhost));
      await step('deleting the Redis keys', async () => {
        const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { lazyConnect: true });
        try {
          await redis.connect();
          const keys = await redis.keys(`${redisPrefix}*`);
          if (keys.length) await redis.del(...keys);
        } finally {
          redis.disconnect();
        }
      });
      rmSync(dir, { recursive: true, force: true });
    })());

  try {
    // A throwaway CA and a certificate for 127.0.0.1, for the webhook receivers: the
    // system trusts the CA through NODE_EXTRA_CA_CERTS (the CA plus the bundle already
    // set there), and startHttpsReceiver reads the certificate from LPM_TEST_TLS_DIR.
    const tls = createTestTls(join(dir, 'tls'), process.env.NODE_EXTRA_CA_CERTS);
    process.env.LPM_TEST_TLS_DIR = tls.dir;
    await Promise.all([ensureRabbitmq(), ensureRedis()]);
    store = await startFerretdb({ dataDir: join(dir, 'ferretdb'), database: pgDatabase });
    addVhost(vhost);
    vhostAdded = true;
    const token = randomBytes(32).toString('hex');
    const amqpUrl = `amqp://guest:guest@127.0.0.1:5672/${encodeURIComponent(vhost)}`;
    const webhookSecretKey = randomBytes(32).toString('base64');
    const runningStore = store;

    const envOf = (tree: Tree, port: number): NodeJS.ProcessEnv => {
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        PORT: String(port),
        MONGO_URL: runningStore.url,
        // This checkout's launcher then gives each process its share of the local store's connections, as `npm start` does.
        LOCAL_STORE_PORT: String(runningStore.port),
        MONGO_DB_PREFIX: tree.dbPrefix,
        AMQP_URL: amqpUrl,
        AMQP_EXCHANGE: tree.exchange,
        REDIS_KEY_PREFIX: redisPrefix,
        INTERNAL_TOKEN: token,
        LOG_LEVEL: 'warn',
        NODE_EXTRA_CA_CERTS: tls.caBundle,
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        WEBHOOK_SECRET_KEY: webhookSecretKey,
        // Every request of the bench comes from one address: its runs of a keyless route (gateway.openapi_yaml) are not the limit's to stop.
        PUBLIC_RATE_LIMIT: '1000000',
      };
      // The webhooks service's own defaults (timeout, attempts at once, retry delays), and
      // no deactivation e-mail leaves the machine.
      for (const name of ['WEBHOOK_TIMEOUT_MS', 'WEBHOOK_CONCURRENCY', 'WEBHOOK_RETRY_DELAYS', 'SMTP_URL']) delete env[name];
      return env;
    };
    const start = async (tree: Tree): Promise<System> => {
      for (let attempt = 1; ; attempt++) {
        const port = await freePortBlock();
        const launching = startSystem(envOf(tree, port), 90_000, tree.root).then((proc) => (running.add(proc), proc));
        starting.add(launching);
        let proc: ChildProcess;
        try {
          proc = await launching;
        } catch (e) {
          endOrphans(redisPrefix);
          // Free when checked, taken before a service listened (other processes pick ports
          // too), or slow to become healthy on a busy machine: again on another block.
          const taken = String(e).includes('EADDRINUSE');
          if (cleaning || attempt >= 3 || !(taken || String(e).includes('did not become healthy'))) throw e;
          console.log(
            taken
              ? `  a port of ${port}-${port + 6} was taken while the system started; starting it again on other ports`
              : '  the system did not become healthy in time (a busy machine?); starting it again',
          );
          continue;
        } finally {
          starting.delete(launching);
        }
        if (cleaning) throw new Error('the bench is stopping'); // the clean-up stops this system too
        return {
          tree,
          gatewayUrl: `http://127.0.0.1:${port}`,
          gatewayInternalUrl: `http://127.0.0.1:${port + 7}`,
          dealsUrl: `http://127.0.0.1:${port + 1}`,
          clientsUrl: `http://127.0.0.1:${port + 2}`,
          casesUrl: `http://127.0.0.1:${port + 3}`,
          activitiesUrl: `http://127.0.0.1:${port + 4}`,
          financialUrl: `http://127.0.0.1:${port + 5}`,
          webhooksUrl: `http://127.0.0.1:${port + 6}`,
          pid: proc.pid!,
          stop: () => stopProcess(proc),
        };
      }
    };
    let main: Promise<System> | undefined;
    const bench: Bench = {
      store,
      dir,
      vhost,
      amqpUrl,
      token,
      baseline,
      commands,
      stopping: () => cleaning !== undefined,
      system: () => (main ??= start(THIS_TREE)),
      start,
      figures: [],
      closing: [],
      atCleanUp: (fn) => void finalizers.push(fn),
      values: {},
      record(key, value) {
        if (Number.isFinite(value)) bench.values[key] = value;
        else console.log(`  (no figure for ${key}: ${value})`);
      },
    };
    return { bench, cleanUp };
  } catch (e) {
    await cleanUp();
    throw e;
  }
}

export type EventCounter = Awaited<ReturnType<typeof createdEventCounter>>;

/**
 * Counts the client.created events that reach the broker from now on, so the bench can
 * wait for the relay to publish one run's backlog before the next run (without
 * scanning the store, which would slow the relay it is waiting for).
 */
export async function createdEventCounter(amqpUrl: string, exchange: string) {
  const conn = await connect(amqpUrl);
  const ch = await conn.createChannel();
  await ch.assertExchange(exchange, 'topic', { durable: true });
  const { queue } = await ch.assertQueue('', { exclusive: true });
  await ch.bindQueue(queue, exchange, 'client.created');
  const published = async () => (await ch.checkQueue(queue)).messageCount;
  return {
    /** Waits until `expected` events were published; reports how fast the backlog went. */
    async drained(expected: number): Promise<void> {
      const started = Date.now();
      const backlog = expected - (await published());
      if (backlog <= 0) return;
      while ((await published()) < expected) await sleep(250);
      const seconds = (Date.now() - started) / 1000;
      console.log(`  outbox backlog of ${backlog} events relayed in ${seconds.toFixed(1)} s (${(backlog / seconds).toFixed(0)} events/s)`);
    },
    /** Date.now() once `expected` events were published (polled every 100 ms), or null at `deadline`. */
    async publishedBy(expected: number, deadline: number): Promise<number | null> {
      while ((await published()) < expected) {
        if (Date.now() > deadline) return null;
        await sleep(100);
      }
      return Date.now();
    },
    /** client.created events published so far (since the counter was made). */
    published,
    close: () => conn.close(),
  };
}
