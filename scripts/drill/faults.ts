// The faults of the drill, each once, at a random point of the writes: the broker
// restarted (its connections closed), the store cut (connections refused) with a
// process SIGKILLed halfway through it (started again into the outage), the store
// hung (connections open, nothing forwarded), and each process of the launcher killed
// with SIGKILL (the launcher starts it again). The shared servers are never touched:
// the system reaches them through TCP proxies the drill controls.
import { readFileSync, readdirSync } from 'node:fs';
import type { TcpProxy } from '@lpm/test-kit/tcp-proxy';

export interface FaultDurations {
  brokerDownMs: number;
  storeCutMs: number;
  storeHangMs: number;
}

export interface Fault {
  name: string;
  run(): Promise<void>;
}

export interface FaultLog {
  name: string;
  /** Writes done when it began. */
  atWrite: number;
  startedAt: string;
  ms: number;
  detail?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The processes a launcher started, by name: `gateway` or a service, from their command lines. */
export function launchedProcesses(launcherPid: number): Map<string, number> {
  const found = new Map<string, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== launcherPid) continue;
      const m = /(?:services\/([a-z]+)|(gateway))\/src\/server\.ts/.exec(
        readFileSync(`/proc/${entry}/cmdline`, 'utf8'),
      );
      if (m) found.set(m[1] ?? m[2], Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

/**
 * The process killed inside the store cut: started again into the outage, it must wait
 * for the store, not exit and stop the launcher.
 */
const STORE_CUT_VICTIM = 'activities';

export function drillFaults(opts: {
  store: TcpProxy;
  broker: TcpProxy;
  launcherPid: number;
  durations: FaultDurations;
  processes: string[];
}): Fault[] {
  const { store, broker, durations } = opts;
  const outage = (proxy: TcpProxy, how: 'cut' | 'stall', ms: number) => async () => {
    proxy[how]();
    try {
      await sleep(ms);
    } finally {
      proxy.restore();
    }
  };
  const kill = (name: string) => async () => {
    const pid = launchedProcesses(opts.launcherPid).get(name);
    if (!pid) throw new Error(`no running ${name} process under the launcher (pid ${opts.launcherPid})`);
    process.kill(pid, 'SIGKILL');
  };
  // Halfway through the cut: the process is started again into the outage, and must wait it out.
  const cutWithKill = (name: string) => async () => {
    store.cut();
    try {
      await sleep(durations.storeCutMs / 2);
      await kill(name)();
      await sleep(durations.storeCutMs / 2);
    } finally {
      store.restore();
    }
  };
  return [
    { name: 'broker restart', run: outage(broker, 'cut', durations.brokerDownMs) },
    { name: `store cut with a SIGKILL of ${STORE_CUT_VICTIM} inside`, run: cutWithKill(STORE_CUT_VICTIM) },
    { name: 'store hang', run: outage(store, 'stall', durations.storeHangMs) },
    ...opts.processes.map((name) => ({ name: `SIGKILL ${name}`, run: kill(name) })),
  ];
}

/**
 * Runs `faults` in a random order (in their own when `ordered`), one after another, each
 * when `writesDone()` reaches its random point between 5% and 85% of `writes`; none more once `stopped()`.
 */
export async function runFaults(
  faults: Fault[],
  writes: number,
  writesDone: () => number,
  log: FaultLog[],
  stopped: () => boolean,
  ordered = false,
): Promise<void> {
  const order = ordered ? [...faults] : [...faults].sort(() => Math.random() - 0.5);
  const points = order.map(() => Math.floor(writes * (0.05 + Math.random() * 0.8))).sort((a, b) => a - b);
  for (const [i, fault] of order.entries()) {
    while (writesDone() < points[i]) {
      if (stopped()) return;
      await sleep(50);
    }
    const started = Date.now();
    const entry: FaultLog = {
      name: fault.name,
      atWrite: writesDone(),
      startedAt: new Date(started).toISOString(),
      ms: 0,
    };
    try {
      await fault.run();
    } catch (e) {
      entry.detail = (e as Error).message;
    }
    entry.ms = Date.now() - started;
    log.push(entry);
    console.log(
      `drill: ${fault.name} at write ${entry.atWrite} (${entry.ms} ms)${entry.detail ? `: ${entry.detail}` : ''}`,
    );
  }
}
