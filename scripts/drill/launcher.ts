// The drill's launcher (scripts/start.ts), seen from outside: its end noticed at once
// (a drill with no system fails with a report rather than waiting), and the system
// stopped with it, including the processes a launcher killed with SIGKILL leaves behind.
import { readFileSync, readdirSync } from 'node:fs';
import type { Launcher } from '../system.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves, as soon as the launcher has ended, with how it ended (`exit 1`, `SIGKILL`). */
export function launcherEnd(launcher: Launcher): Promise<string> {
  const how = () => (launcher.signalCode ? launcher.signalCode : `exit ${launcher.exitCode}`);
  if (launcher.exitCode !== null || launcher.signalCode !== null) return Promise.resolve(how());
  return new Promise((resolve) => launcher.once('exit', () => resolve(how())));
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Sends `signal` to each of `pids` still alive, then waits up to `ms` for them to be gone; those left are SIGKILLed. */
async function end(pids: number[], signal: NodeJS.Signals, ms: number): Promise<void> {
  for (const pid of pids.filter(alive)) process.kill(pid, signal);
  for (const until = Date.now() + ms; pids.some(alive) && Date.now() < until;) await sleep(100);
  for (const pid of pids.filter(alive)) process.kill(pid, 'SIGKILL');
}

/** The server processes the launcher said it started (`[start] <name> pid <pid>`) that still run one. */
function startedServers(launcher: Launcher): number[] {
  const pids = [...launcher.output().matchAll(/\[start\] \S+ pid (\d+)/g)].map((m) => Number(m[1]));
  return pids.filter((pid) => {
    try {
      return /\/src\/server\.ts/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
    } catch {
      return false;
    }
  });
}

/**
 * Stops the launcher (SIGTERM: it stops what it started), then whatever server process
 * it started still runs (a launcher that was SIGKILLed leaves them running).
 */
export async function stopSystem(launcher: Launcher): Promise<void> {
  if (launcher.exitCode === null && launcher.signalCode === null) await end([launcher.pid!], 'SIGTERM', 30_000);
  await end(startedServers(launcher), 'SIGTERM', 20_000);
}

/** Stops every child process of this one (a launcher or a FerretDB whose start was under way when the drill was stopped). */
export async function stopChildren(): Promise<void> {
  const children = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === process.pid;
      } catch {
        return false;
      }
    })
    .map(Number);
  await end(children, 'SIGTERM', 20_000);
}
