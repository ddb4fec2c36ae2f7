// Starts the whole system the way `npm start` does, on a free block of ports, for
// the end-to-end test and the benchmark.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { portBlockSize } from '../shared/src/service/port-layout.ts';
import { isListening } from './local-store.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * Where the kernel's ephemeral ports (those outgoing connections get) begin: a port
 * chosen above it can be taken by a connection between the check and the listen.
 */
function ephemeralStart(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768;
  } catch {
    return 32768;
  }
}

/**
 * A port P with P..P+size-1 free, below the ephemeral range: by default the block of
 * a system (the gateway, the services and the gateway's internal listener).
 */
export async function freePortBlock(size = portBlockSize()): Promise<number> {
  const top = Math.max(ephemeralStart(), 20000 + 1000) - size;
  for (;;) {
    const candidate = 20000 + Math.floor(Math.random() * (top - 20000));
    const busy = await Promise.all(Array.from({ length: size }, (_, i) => isListening(candidate + i)));
    if (!busy.some(Boolean)) return candidate;
  }
}

/** A Node.js script of `tree` running: what it printed so far (stdout and stderr), and its exit code once it ends. */
export function runNodeScript(script: string, args: string[], env: NodeJS.ProcessEnv = process.env, tree = root) {
  const proc = spawn(process.execPath, [script, ...args], { cwd: tree, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  proc.stdout.on('data', (d) => (output += d));
  proc.stderr.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((done) => proc.once('exit', (code) => done(code)));
  return { proc, output: () => output, exited };
}

/** A running launcher; `output()` is all it printed so far (its `[start] <name> pid <pid>` lines among it). */
export type Launcher = ChildProcess & { output(): string };

/**
 * Runs scripts/start.ts with env (PORT set) and `args` (e.g. `--replicas cases=2`), and
 * resolves once it printed that the gateway is ready. `tree` is the checkout to start
 * (this one by default; the benchmark also starts a baseline checkout).
 */
export async function startSystem(
  env: NodeJS.ProcessEnv,
  timeoutMs = 90_000,
  tree = root,
  args: string[] = [],
): Promise<Launcher> {
  const { proc, output } = runNodeScript('scripts/start.ts', args, env, tree);
  // SYSTEM_LOG: the launcher and its processes' lines appended to that file as well (docs/benchmarks.md).
  if (process.env.SYSTEM_LOG) {
    const log = createWriteStream(process.env.SYSTEM_LOG, { flags: 'a' });
    proc.stdout.pipe(log, { end: false });
    proc.stderr.pipe(log, { end: false });
    proc.once('close', () => log.end());
  }
  const deadline = Date.now() + timeoutMs;
  while (!output().includes(`ready: http://127.0.0.1:${env.PORT}`)) {
    if (Date.now() > deadline || proc.exitCode !== null) {
      await stopLauncher(proc);
      throw new Error(`the system did not start:\n${output()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return Object.assign(proc, { output });
}

/**
 * Stops a launcher and, through it, its gateway and services (a SIGKILL would leave
 * them running): SIGTERM, then SIGKILL if it is still there after 20 s.
 */
async function stopLauncher(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((done) => proc.once('exit', () => done()));
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(timer);
}
