// Scenario `machine`: how fast this machine is, before anything else runs. Absolute
// targets (deliveries a second, latencies) hold only on machines as fast as the ones
// they were set on, and machines of the same kind have differed here by 3x. One
// trivial Fastify route (trivial-route.ts, a child process) under autocannon with 64
// connections for BENCH_DURATION s: requests a second and the route's own CPU time a
// request, against the reference machine's ~55,000 req/s at 19 µs (docs/benchmarks.md).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { DURATION_S, cpuMs, sleep, type Bench } from './support.ts';

const CONNECTIONS = 64;
/** The same route's CPU a request on the reference machine, a 2-core machine of this kind (docs/benchmarks.md). */
const REFERENCE_CPU_US = 19;

export async function machineSection(b: Bench): Promise<void> {
  const script = fileURLToPath(new URL('./trivial-route.ts', import.meta.url));
  const proc = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'pipe'] });
  b.commands.add(proc);
  try {
    let output = '';
    proc.stdout.on('data', (d) => (output += d));
    proc.stderr.on('data', (d) => (output += d));
    const deadline = Date.now() + 30_000;
    let port: string | undefined;
    while (!(port = /listening (\d+)/.exec(output)?.[1])) {
      if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`the trivial route did not start:\n${output}`);
      await sleep(50);
    }
    const url = `http://127.0.0.1:${port}/`;
    await autocannon({ url, connections: CONNECTIONS, duration: 2 });
    const before = cpuMs(proc.pid!);
    const result = await autocannon({ url, connections: CONNECTIONS, duration: DURATION_S });
    const cpuUs = ((cpuMs(proc.pid!) - before) * 1000) / Math.max(result.requests.total, 1);
    const rps = result.requests.average;
    console.log(
      `machine: one trivial Fastify route, ${CONNECTIONS} connections for ${DURATION_S} s: ${Math.round(rps)} req/s, ${cpuUs.toFixed(0)} µs of its CPU a request ` +
        `(${(cpuUs / REFERENCE_CPU_US).toFixed(1)}x the reference machine's ${REFERENCE_CPU_US} µs)`,
    );
    b.record('machine.trivial_route.rps', rps);
    b.record('machine.trivial_route.cpu_us_per_request', cpuUs);
    b.record('machine.trivial_route.cpu_vs_reference', cpuUs / REFERENCE_CPU_US);
  } finally {
    if (proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise((done) => proc.once('exit', done));
      proc.kill('SIGTERM');
      await exited;
    }
    b.commands.delete(proc);
  }
}
