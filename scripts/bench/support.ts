// What the bench's sections share: settings, the systems a run starts (bench-run.ts
// opens the run's private resources: FerretDB, vhost, Redis key prefix, temporary
// directory, test CA), the broker's count of client.created events, and the table of figures.
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { connectToAnyNode } from '../../shared/src/messaging/nodes.ts';
import { MALLOC_ENV, NODE_FLAGS } from '../process-settings.ts';
import type { RunningStore, ServiceName } from './internals.ts';

/** This checkout. */
export const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
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

/** The mean of a run's rounds (latencies: the mean of each round's percentile; errors and writes: their sums). */
export function meanOfRounds(name: string, rounds: Figures[]): Figures {
  const total = (f: (x: Figures) => number) => rounds.reduce((sum, r) => sum + f(r), 0);
  return {
    name,
    rps: total((r) => r.rps) / rounds.length,
    p50: total((r) => r.p50) / rounds.length,
    p99: total((r) => r.p99) / rounds.length,
    errors: total((r) => r.errors),
    created: total((r) => r.created),
  };
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
  console.log(
    `  ${name}: ${times.length} runs, p50 ${quantile(times, 0.5).toFixed(1)} ms, p99 ${quantile(times, 0.99).toFixed(1)} ms`,
  );
  return {
    name: `${name} (${times.length} runs)`,
    rps: (times.length * 1000) / total,
    p50: quantile(times, 0.5),
    p99: quantile(times, 0.99),
    errors: 0,
    created: 0,
  };
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
export async function drive<A>(
  op: Operation<A>,
  concurrency: number,
  seconds: number,
  count = Infinity,
): Promise<Sample> {
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
  for (const f of rows)
    console.log(
      `| ${f.name} | ${f.rps >= 10 ? f.rps.toFixed(0) : f.rps.toFixed(2)} | ${ms(f.p50)} | ${ms(f.p99)} | ${f.errors} |`,
    );
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
  /** The gateway's internal listener (/internal/*), after the services (shared/src/service/port-layout.ts). */
  gatewayInternalUrl: string;
  /** Each service's first replica, next to the gateway's port. */
  serviceUrls: Record<ServiceName, string>;
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
  /** A system of `tree` on the run's store, vhost and key prefix (`env` on top: another broker); the caller stops it. */
  start(tree: Tree, env?: NodeJS.ProcessEnv): Promise<System>;
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
  return (
    /services\/([^/]+)\/src\/server\.ts$/.exec(script)?.[1] ??
    (/gateway\/src\/server\.ts$/.test(script) ? 'gateway' : script.split('/').pop()!)
  );
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
export async function startChildServer(
  b: Bench,
  script: string,
  opts: { nodeFlags?: readonly string[]; env?: NodeJS.ProcessEnv } = {},
): Promise<ChildServer> {
  const path = fileURLToPath(new URL(`./${script}`, import.meta.url));
  const proc: ChildProcess = spawn(process.execPath, [...(opts.nodeFlags ?? []), path], {
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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

/**
 * `script` run as the launcher runs a service (scripts/start.ts): with its Node flags
 * (4 MB semi-spaces alone cost about 60 µs of scavenges per proxied GET) and the
 * malloc settings under the environment's own.
 */
export const startLikeService = (b: Bench, script: string, env: NodeJS.ProcessEnv): Promise<ChildServer> =>
  startChildServer(b, script, { nodeFlags: NODE_FLAGS, env: { ...MALLOC_ENV, ...process.env, ...env } });

/** CPU time (user + system) a process has used so far, in ms, from /proc/<pid>/stat. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime, fields 14 and 15 of stat(5), in clock ticks (USER_HZ, 100 on Linux).
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** The commit a checkout is at, and how many tracked files differ from it (read without taking the index lock). */
export function describeTree(root: string): string {
  try {
    const git = (...args: string[]) =>
      execFileSync('git', ['--no-optional-locks', '-C', root, ...args], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
    const changed = git('status', '--porcelain', '--untracked-files=no').split('\n').filter(Boolean).length;
    return `${git('rev-parse', '--short', 'HEAD')}${changed ? ` + ${changed} changed files` : ''}`;
  } catch {
    return 'not a git checkout';
  }
}

export type EventCounter = Awaited<ReturnType<typeof createdEventCounter>>;

/**
 * Counts the client.created events that reach the broker from now on, so the bench can
 * wait for the relay to publish one run's backlog before the next run (without
 * scanning the store, which would slow the relay it is waiting for).
 */
export async function createdEventCounter(amqpUrl: string, exchange: string) {
  const conn = await connectToAnyNode(amqpUrl);
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
      console.log(
        `  outbox backlog of ${backlog} events relayed in ${seconds.toFixed(1)} s (${(backlog / seconds).toFixed(0)} events/s)`,
      );
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
