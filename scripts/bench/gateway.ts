// Scenario `gateway`: what the gateway costs over its floor. A bare @fastify/http-proxy
// (bare-proxy.ts, a child process run as the gateway is) in front of the SAME clients
// service, turning the same API keys into the same identity headers by a map lookup;
// autocannon with the same connections through each, after an unmeasured warm-up of
// each, in rounds of alternating order (gateway then bare, bare then gateway) so
// drift of the shared machine favours neither. GET by id, then POST. Beside the
// ratios, each side's own CPU time per response (/proc/<pid>/stat), which other
// load on the machine moves far less than the throughput. Before those, GET
// /v1/openapi.yaml one request at a time once the document is built and its YAML
// written (the first requests): `gateway.openapi_yaml.p50_ms`, target 5 ms or less.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { clientsState, measure } from './clients.ts';
import { identityHeaders } from './internals.ts';
import { consumersSettled } from './webhook-support.ts';
import {
  CONNECTIONS,
  DURATION_S,
  cpuMs,
  meanOfRounds,
  measureRaw,
  ms,
  processName,
  processes,
  ratioOf,
  recordRun,
  startLikeService,
  type Bench,
  type ChildServer,
  type Figures,
  type System,
} from './support.ts';

/** Rounds of the pair (BENCH_GATEWAY_ROUNDS); odd rounds have the gateway go first, even ones the bare proxy. */
const ROUNDS = Number(process.env.BENCH_GATEWAY_ROUNDS ?? 2);
const RUNS = [
  ['get_by_id', 'GET /v1/clients/{id}', 'GET'],
  ['post', 'POST /v1/clients', 'POST'],
] as const;

/** The bare proxy in front of `upstream`, turning each API key of `identities` into its identity headers. */
export function startBareProxy(
  b: Bench,
  upstream: string,
  identities: Record<string, Record<string, string>>,
): Promise<ChildServer> {
  const file = join(b.dir, `bare-proxy-identities-${new URL(upstream).port}.json`);
  writeFileSync(file, JSON.stringify(identities), { mode: 0o600 });
  return startLikeService(b, 'bare-proxy.ts', { BARE_PROXY_UPSTREAM: upstream, BARE_PROXY_IDENTITIES: file });
}

/** The gateway's process: the launcher's child running gateway/src/server.ts. */
function gatewayPid(sys: System): number {
  const found = processes().find((p) => p.ppid === sys.pid && processName(p.pid) === 'gateway');
  if (!found) throw new Error(`no gateway process among the children of the launcher ${sys.pid}`);
  return found.pid;
}

const avg = (xs: number[]) => xs.reduce((sum, x) => sum + x, 0) / xs.length;

const WARM_S = 3;

/**
 * GET /v1/openapi.yaml served from the built document, one request at a time:
 * `gateway.openapi_yaml.*` as a client that takes the bytes as they are
 * (Accept-Encoding: identity), the gateway's serving; `gateway.openapi_yaml_gzip.*`
 * as fetch asks by default (gzip, 36 KB instead of 480), where most of the time is
 * the client's own decompression (undici's, 2-3 ms on this machine).
 */
async function openApiYaml(b: Bench, sys: System): Promise<Figures> {
  const get = (coding: string) => async () => {
    const res = await fetch(`${sys.gatewayUrl}/v1/openapi.yaml`, { headers: { 'accept-encoding': coding } });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`GET /v1/openapi.yaml answered ${res.status}: ${text.slice(0, 200)}`);
  };
  // Unmeasured: the first builds the document and writes its YAML, the next compress it; then
  // WARM_S of requests, for the gateway's code to be compiled and the system's start to be over.
  const warmUntil = Date.now() + WARM_S * 1000;
  for (let i = 0; i < 3 || Date.now() < warmUntil; i++) await get(i % 2 ? 'identity' : 'gzip, deflate')();
  const f = await measureRaw('GET /v1/openapi.yaml, warm, one at a time', get('identity'));
  b.record('gateway.openapi_yaml.p50_ms', f.p50);
  b.record('gateway.openapi_yaml.p99_ms', f.p99);
  const gz = await measureRaw(
    'GET /v1/openapi.yaml, warm, one at a time, gzip (fetch decompressing)',
    get('gzip, deflate'),
  );
  b.record('gateway.openapi_yaml_gzip.p50_ms', gz.p50);
  b.record('gateway.openapi_yaml_gzip.p99_ms', gz.p99);
  return f;
}

export async function gatewaySection(b: Bench): Promise<void> {
  const sys = await b.system();
  const yaml = await openApiYaml(b, sys);
  const st = await clientsState(b, sys);
  const identities = Object.fromEntries(st.teams.map((t) => [t.key, identityHeaders(t.identity, b.token)]));
  const bare = await startBareProxy(b, sys.serviceUrls.clients, identities);
  const pids = { gateway: gatewayPid(sys), bare: bare.pid };
  console.log(
    `gateway: against a bare @fastify/http-proxy to the same clients service, ${CONNECTIONS} connections each, ${DURATION_S} s per run, ` +
      `a warm-up of each, then ${ROUNDS} rounds alternating (gateway, bare proxy; bare proxy, gateway; ...), ${st.teams.length} enterprise teams`,
  );
  try {
    const rows: Figures[] = [yaml];
    for (const [key, label, method] of RUNS) {
      const through = { gateway: [] as Figures[], bare: [] as Figures[] };
      const cpuPerResponse = { gateway: [] as number[], bare: [] as number[] };
      // Unmeasured: the first requests of each way meet cold code, connections and (in the gateway) keys not yet cached.
      for (const url of [sys.gatewayUrl, bare.url]) {
        await st.events.drained(st.created);
        await consumersSettled(b.vhost, sys.tree.exchange);
        st.created += (await measure(`${label} warm-up`, url, method, st.teams, true, b.token)).created;
      }
      const ways = [
        ['gateway', sys.gatewayUrl],
        ['bare', bare.url],
      ] as const;
      for (let round = 1; round <= ROUNDS; round++) {
        // Alternating which goes first, so that neither always follows the other's load.
        for (const [way, url] of round % 2 === 1 ? ways : [...ways].reverse()) {
          // A POST run's events relayed and consumed before the next run, so no run shares the machine with them.
          await st.events.drained(st.created);
          await consumersSettled(b.vhost, sys.tree.exchange);
          const cpuBefore = cpuMs(pids[way]);
          const f = await measure(
            `${label} ${way === 'gateway' ? 'gateway' : 'bare proxy'}`,
            url,
            method,
            st.teams,
            true,
            b.token,
          );
          const cpuUs = ((cpuMs(pids[way]) - cpuBefore) * 1000) / Math.max(f.responses ?? 0, 1);
          st.created += f.created;
          through[way].push(f);
          cpuPerResponse[way].push(cpuUs);
          console.log(
            `  round ${round}, ${f.name}: ${f.rps.toFixed(0)} req/s, p50 ${ms(f.p50)} ms, p99 ${ms(f.p99)} ms, ${cpuUs.toFixed(0)} µs of its CPU a response` +
              `${f.errors ? `, ${f.errors} non-2xx or errors` : ''}`,
          );
        }
      }
      const [gated, floor] = [
        meanOfRounds(`${label} gateway (mean of ${ROUNDS})`, through.gateway),
        meanOfRounds(`${label} bare proxy (mean of ${ROUNDS})`, through.bare),
      ];
      rows.push(gated, floor);
      const cpu = { gateway: avg(cpuPerResponse.gateway), bare: avg(cpuPerResponse.bare) };
      console.log(
        `${label}, gateway/bare proxy: throughput ${ratioOf(gated.rps, floor.rps).toFixed(2)} ` +
          `(by round ${through.gateway.map((g, i) => ratioOf(g.rps, through.bare[i].rps).toFixed(2)).join(', ')}), ` +
          `p50 ${ratioOf(gated.p50, floor.p50).toFixed(2)}x, p99 ${ratioOf(gated.p99, floor.p99).toFixed(2)}x, ` +
          `CPU a response ${cpu.gateway.toFixed(0)} / ${cpu.bare.toFixed(0)} µs`,
      );
      recordRun(b, `gateway.${key}.gateway`, gated);
      recordRun(b, `gateway.${key}.bare_proxy`, floor);
      b.record(`gateway.${key}.throughput_vs_bare_proxy`, ratioOf(gated.rps, floor.rps));
      b.record(`gateway.${key}.p50_vs_bare_proxy`, ratioOf(gated.p50, floor.p50));
      b.record(`gateway.${key}.p99_vs_bare_proxy`, ratioOf(gated.p99, floor.p99));
      b.record(`gateway.${key}.gateway_cpu_us_per_response`, cpu.gateway);
      b.record(`gateway.${key}.bare_proxy_cpu_us_per_response`, cpu.bare);
    }
    await st.events.drained(st.created);
    b.figures.push(...rows);
  } finally {
    await bare.stop();
  }
}
