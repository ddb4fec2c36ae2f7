// Scenario `machine`: how fast this machine is, before anything else runs. Absolute
// targets (deliveries a second, latencies) hold only on machines as fast as the ones
// they were set on, and machines of the same kind have differed here by 3x. One
// trivial Fastify route (trivial-route.ts, a child process) under autocannon with 64
// connections for BENCH_DURATION s: requests a second and the route's own CPU time a
// request, against the reference machine's ~55,000 req/s at 19 µs (docs/benchmarks.md).
import autocannon from 'autocannon';
import { DURATION_S, cpuMs, startChildServer, type Bench } from './support.ts';

const CONNECTIONS = 64;
/** The same route's CPU a request on the reference machine, a 2-core machine of this kind (docs/benchmarks.md). */
const REFERENCE_CPU_US = 19;

export async function machineSection(b: Bench): Promise<void> {
  const route = await startChildServer(b, 'trivial-route.ts');
  try {
    const url = `${route.url}/`;
    await autocannon({ url, connections: CONNECTIONS, duration: 2 });
    const before = cpuMs(route.pid);
    const result = await autocannon({ url, connections: CONNECTIONS, duration: DURATION_S });
    const cpuUs = ((cpuMs(route.pid) - before) * 1000) / Math.max(result.requests.total, 1);
    const rps = result.requests.average;
    console.log(
      `machine: one trivial Fastify route, ${CONNECTIONS} connections for ${DURATION_S} s: ${Math.round(rps)} req/s, ${cpuUs.toFixed(0)} µs of its CPU a request ` +
        `(${(cpuUs / REFERENCE_CPU_US).toFixed(1)}x the reference machine's ${REFERENCE_CPU_US} µs)`,
    );
    b.record('machine.trivial_route.rps', rps);
    b.record('machine.trivial_route.cpu_us_per_request', cpuUs);
    b.record('machine.trivial_route.cpu_vs_reference', cpuUs / REFERENCE_CPU_US);
  } finally {
    await route.stop();
  }
}
