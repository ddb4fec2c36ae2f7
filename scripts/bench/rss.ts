// Scenario `rss`: resident memory (VmRSS) of each process of the running system, the
// launcher and its children (the gateway and each service), once the system has been
// idle for RSS_IDLE_S seconds. Runs right after the system starts, before any load.
// Also the CPU the system spends idle over those seconds (timers, polls, heartbeats),
// which every write at a low rate carries a share of.
import { readFileSync } from 'node:fs';
import { describeLoad, loadBetween, recordLoad, snapshotLoad } from './machine-load.ts';
import { processName, processes, sleep, type Bench } from './support.ts';

const RSS_IDLE_S = Number(process.env.BENCH_RSS_IDLE ?? 10);

function rssMb(pid: number): number {
  const kb = Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return kb / 1024;
}

export async function rssSection(b: Bench): Promise<void> {
  const sys = await b.system();
  console.log(`rss: the system idle for ${RSS_IDLE_S} s, then VmRSS of the launcher and each of its children`);
  const before = snapshotLoad();
  await sleep(RSS_IDLE_S * 1000);
  const idle = loadBetween(before, snapshotLoad());
  console.log(`  idle: ${describeLoad(idle)}`);
  recordLoad(b, 'rss.idle', idle);
  const rows = [
    { name: 'launcher', pid: sys.pid },
    ...processes()
      .filter((p) => p.ppid === sys.pid)
      .map(({ pid }) => ({ name: processName(pid), pid })),
  ].map((p) => ({ ...p, mb: rssMb(p.pid) }));
  console.log('\n| process | pid | idle RSS MB |\n|---|---:|---:|');
  for (const r of rows) console.log(`| ${r.name} | ${r.pid} | ${r.mb.toFixed(0)} |`);
  for (const r of rows) b.record(`rss.${r.name}_mb`, r.mb);
  b.record('rss.max_idle_mb', Math.max(...rows.map((r) => r.mb)));
}
