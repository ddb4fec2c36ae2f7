// How busy the whole machine was over a window of a scenario, and which processes
// made it busy: a target met with the cores nearly full has no headroom on a
// slower machine, and the figures alone do not show it. Read from /proc: the
// machine's busy time (/proc/stat) and each process's CPU time, grouped by what
// it is (a service, the gateway, FerretDB, PostgreSQL's backends, RabbitMQ, this
// bench).
import { availableParallelism } from 'node:os';
import { readFileSync } from 'node:fs';
import { cpuMs, processes, processName, type Bench } from './support.ts';

export interface Snapshot {
  at: number;
  /** The machine's busy and total time, in clock ticks over all cores. */
  busy: number;
  total: number;
  /** CPU ms by process, grouped by kind. */
  byKind: Map<string, number>;
}

export interface MachineLoad {
  cores: number;
  /** Cores busy on average over the window (of `cores`). */
  busyCores: number;
  /** Cores each kind of process used, the busiest first. */
  byKind: [string, number][];
}

const RABBITMQ = new Set(['beam.smp', 'epmd', 'erl_child_setup', 'inet_gethost']);

/**
 * The run's own store: its FerretDB process and its PostgreSQL database. Other
 * FerretDB processes and other databases' PostgreSQL backends (another test run on the
 * machine) are kinds of their own, `ferretdb (other)` and `postgres (other)`, so a
 * figure of the system's CPU counts only the system's store.
 */
let ownStore: { ferretdbPid: number; database: string } | null = null;

export function setOwnStore(store: { ferretdbPid: number; database: string }): void {
  ownStore = store;
}

/** `postgres: <cluster>: <user> <database> <client> <state>` is a backend; a background process names no database. */
function postgresKind(pid: number): string {
  const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  const backend = /^postgres: (?:\S+: )?\S+ (\S+) \S+\(\d+\)/.exec(title);
  return ownStore && backend && backend[1] !== ownStore.database ? 'postgres (other)' : 'postgres';
}

/**
 * The kind of a process: `gateway`, a service's name, `bench`, `rabbitmq`, `kernel`, or
 * its program (`ferretdb`, `postgres`, ...). A Node.js process that this bench did not
 * start (`ours` holds those it did) is `<name> (other)`.
 */
function kindOf(pid: number, ours: Set<number>): string {
  const program = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  if (RABBITMQ.has(program)) return 'rabbitmq';
  if (program === 'postgres') return postgresKind(pid);
  if (program === 'ferretdb' && ownStore && pid !== ownStore.ferretdbPid) return 'ferretdb (other)';
  // Kernel threads have no command line (kworker/0:2-events, ...).
  if (readFileSync(`/proc/${pid}/cmdline`, 'utf8') === '') return 'kernel';
  if (program !== 'node' && program !== 'MainThread') return program;
  const name = processName(pid);
  if (!ours.has(pid)) return `${name} (other)`;
  return name === 'main.ts' ? 'bench' : name;
}

/** This process and every process below it. */
function descendants(all: { pid: number; ppid: number }[]): Set<number> {
  const ours = new Set([process.pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const { pid, ppid } of all) if (!ours.has(pid) && ours.has(ppid)) grew = ours.add(pid).size > 0;
  }
  return ours;
}

function machineTicks(): { busy: number; total: number } {
  // cpu user nice system idle iowait irq softirq steal ...
  const ticks = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const total = ticks.reduce((sum, t) => sum + t, 0);
  return { busy: total - ticks[3] - ticks[4], total };
}

export function snapshotLoad(): Snapshot {
  const byKind = new Map<string, number>();
  const all = processes();
  const ours = descendants(all);
  for (const { pid } of all) {
    try {
      const kind = kindOf(pid, ours);
      byKind.set(kind, (byKind.get(kind) ?? 0) + cpuMs(pid));
    } catch {
      // exited meanwhile
    }
  }
  return { at: performance.now(), ...machineTicks(), byKind };
}

/** The machine's load between two snapshots. Processes that started or ended between them count what they had at the end. */
export function loadBetween(from: Snapshot, to: Snapshot): MachineLoad {
  const cores = availableParallelism();
  const wallMs = Math.max(to.at - from.at, 1);
  const byKind = [...to.byKind]
    .map(([kind, ms]): [string, number] => [kind, (ms - (from.byKind.get(kind) ?? 0)) / wallMs])
    .filter(([, c]) => c >= 0.01)
    .sort((a, b) => b[1] - a[1]);
  const busyCores = (cores * (to.busy - from.busy)) / Math.max(to.total - from.total, 1);
  return { cores, busyCores, byKind };
}

/** CPU ms each kind of process used between two snapshots, the busiest first. */
export function cpuMsBetween(from: Snapshot, to: Snapshot): [string, number][] {
  return [...to.byKind]
    .map(([kind, ms]): [string, number] => [kind, ms - (from.byKind.get(kind) ?? 0)])
    .filter(([, ms]) => ms > 0)
    .sort((a, b) => b[1] - a[1]);
}

export const describeLoad = (l: MachineLoad): string =>
  `${l.busyCores.toFixed(2)} of ${l.cores} cores busy (${l.byKind.map(([k, c]) => `${k} ${c.toFixed(2)}`).join(', ')})`;

/** `<prefix>.machine_busy_cores` and `<prefix>.cpu_cores.<kind>` for each kind of process. */
export function recordLoad(b: Bench, prefix: string, l: MachineLoad): void {
  b.record(`${prefix}.machine_busy_cores`, l.busyCores);
  for (const [kind, cores] of l.byKind) b.record(`${prefix}.cpu_cores.${kind}`, cores);
}
