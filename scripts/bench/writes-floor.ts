// The floor of `writes.core_ms_per_write`, measured in the same run: the same POST
// /v1/clients, open loop at the first rate after the section's warm-up (a new process's
// code runs slower until the JIT has seen it), through a bare @fastify/http-proxy
// (bare-proxy.ts, the gateway's floor) to write-floor.ts, which stores the record
// with one raw insert and publishes one confirmed event to a quorum queue that a
// consumer acks. Its cost is those two processes' CPU, and the store's and the
// broker's above what they spent idle (the system stays up beside it, idle), per
// write. `writes.core_ms_vs_floor` holds on any machine, where the core-ms do not.
import { startBareProxy } from './gateway.ts';
import { cpuMsBetween, snapshotLoad } from './machine-load.ts';
import { call, openLoop } from './open-loop.ts';
import { quantile, startLikeService, type Bench } from './support.ts';

/** The store and the broker, shared with the idle system: counted above their idle rate. */
const SHARED_KINDS = ['ferretdb', 'postgres', 'rabbitmq'];
const FLOOR_KINDS = ['bare-proxy.ts', 'write-floor.ts'];

export interface Floor {
  coreMs: number;
  p50: number;
  p99: number;
}

export interface FloorRun {
  rate: number;
  seconds: number;
  warmupSeconds: number;
  slowMs: number;
}

/** The floor's writes at `run.rate` for `run.seconds`; `idleCores`: each kind's cores with the system idle. */
export async function writeFloor(b: Bench, run: FloorRun, idleCores: Map<string, number>): Promise<Floor> {
  const { rate, seconds, slowMs } = run;
  const floor = await startLikeService(b, 'write-floor.ts', {
    WRITE_FLOOR_STORE_URL: b.store.url,
    WRITE_FLOOR_AMQP_URL: b.amqpUrl,
  });
  const proxy = await startBareProxy(b, floor.url, {});
  try {
    const send = async (i: number) =>
      (await call(proxy.url, 'floor', 'POST', '/v1/clients', { type: 'PJ', name: `Writes floor ${i}` })).status === 201;
    await openLoop(rate, run.warmupSeconds, slowMs, send);
    const before = snapshotLoad();
    const measured = await openLoop(rate, seconds, slowMs, send);
    const after = snapshotLoad();
    const { unconfirmed } = (await (await fetch(`${floor.url}/unconfirmed`)).json()) as { unconfirmed: number };
    if (unconfirmed > 0) console.log(`  the floor: ${unconfirmed} publishes the broker did not confirm`);
    const wallMs = after.at - before.at;
    const byKind = new Map(cpuMsBetween(before, after));
    const ms = (kind: string) => byKind.get(kind) ?? 0;
    const above = (kind: string) => Math.max(0, ms(kind) - (idleCores.get(kind) ?? 0) * wallMs);
    const answered = Math.max(measured.latencies.length, 1);
    const parts: [string, number][] = [
      ...FLOOR_KINDS.map((k): [string, number] => [k, ms(k)]),
      ...SHARED_KINDS.map((k): [string, number] => [k, above(k)]),
    ];
    const result: Floor = {
      coreMs: parts.reduce((sum, [, v]) => sum + v, 0) / answered,
      p50: quantile(measured.latencies, 0.5),
      p99: quantile(measured.latencies, 0.99),
    };
    console.log(
      `  the floor (bare proxy, one insert, one confirmed event consumed) at ${rate}/s for ${seconds} s: ${measured.latencies.length} of ${measured.total} done, ` +
        `p50 ${result.p50.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms; core-ms a write ${result.coreMs.toFixed(2)}: ` +
        `${parts.map(([k, v]) => `${k} ${(v / answered).toFixed(2)}`).join(', ')} (the store and broker above their idle)`,
    );
    return result;
  } finally {
    await proxy.stop();
    await floor.stop();
  }
}
