// Section `clients`: GET /v1/clients/{id} and POST /v1/clients with autocannon,
// straight to the clients service (with the internal credential) and through the
// gateway. With BENCH_BASELINE, this checkout and the baseline checkout in turn
// (this, baseline, this, baseline), each on its own database prefix and exchange.
import autocannon from 'autocannon';
import { identityHeaders, type Identity } from './internals.ts';
import {
  CONNECTIONS,
  DURATION_S,
  ROOT,
  createdEventCounter,
  describeTree,
  meanOfRounds,
  ms,
  quantile,
  ratioOf,
  recordRun,
  type Bench,
  type EventCounter,
  type Figures,
  type System,
  type Tree,
} from './support.ts';
import { createTeams, identityOf } from './teams.ts';

/** Enterprise allows 1,000 requests a minute per team: spread the load so no 429 skews the figures. */
const TEAMS = 40;
/** Rounds per checkout with BENCH_BASELINE. */
const ROUNDS = 2;
const RUNS = [
  ['GET /v1/clients/{id}', 'GET'],
  ['POST /v1/clients', 'POST'],
] as const;

export interface BenchTeam {
  key: string;
  identity: Identity;
  clientId: string;
}

/** A checkout's teams (each with one client to GET) and its count of client.created events. */
export interface TreeState {
  teams: BenchTeam[];
  events: EventCounter;
  /** client.created events written so far. */
  created: number;
}

async function prepare(b: Bench, sys: System): Promise<TreeState> {
  const started = Date.now();
  const issued = await createTeams(
    b,
    sys.tree,
    Array.from({ length: TEAMS }, (_, n) => `Bench ${n}`),
  );
  console.log(
    `  ${TEAMS} enterprise teams made with the operator CLI of ${sys.tree.root} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  const events = await createdEventCounter(b.amqpUrl, sys.tree.exchange);
  const teams: BenchTeam[] = [];
  for (const [n, t] of issued.entries()) {
    const identity = identityOf(t);
    const res = await fetch(`${sys.serviceUrls.clients}/v1/clients`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...identityHeaders(identity, b.token) },
      body: JSON.stringify({ type: 'PF', name: `Cliente ${n}` }),
    });
    if (res.status !== 201) throw new Error(`POST /v1/clients answered ${res.status}: ${await res.text()}`);
    teams.push({ key: t.api_key, identity, clientId: ((await res.json()) as { data: { id: string } }).data.id });
  }
  return { teams, events, created: teams.length };
}

const states = new WeakMap<System, Promise<TreeState>>();

/** The teams of `sys` and their event count, made once for every scenario that reads and writes clients (its counter closed at the clean-up). */
export function clientsState(b: Bench, sys: System): Promise<TreeState> {
  let st = states.get(sys);
  if (!st) {
    states.set(sys, (st = prepare(b, sys)));
    b.atCleanUp(async () => (await st!).events.close());
  }
  return st;
}

/** autocannon for DURATION_S with `connections`, round robin over the teams: with their API key (`viaGateway`), or their identity headers. */
export async function measure(
  name: string,
  url: string,
  method: 'GET' | 'POST',
  teams: BenchTeam[],
  viaGateway: boolean,
  token: string,
  connections = CONNECTIONS,
  seconds = DURATION_S,
): Promise<Figures> {
  let i = 0;
  const run = autocannon({
    url,
    connections,
    duration: seconds,
    requests: [
      {
        method,
        setupRequest: (req) => {
          const t = teams[i++ % teams.length];
          const auth = viaGateway ? { authorization: `Bearer ${t.key}` } : identityHeaders(t.identity, token);
          return {
            ...req,
            path: method === 'GET' ? `/v1/clients/${t.clientId}` : '/v1/clients',
            headers: { 'content-type': 'application/json', ...auth },
            ...(method === 'POST'
              ? { body: JSON.stringify({ type: 'PJ', name: `Bench ${i}`, segment: 'regular' }) }
              : {}),
          };
        },
      },
    ],
  }) as unknown as autocannon.Instance & PromiseLike<autocannon.Result>;
  // autocannon's own percentiles are whole milliseconds: the 2xx responses' times, to the microsecond.
  const latencies: number[] = [];
  run.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status >= 200 && status < 300) latencies.push(ms);
  });
  const result = await run;
  latencies.sort((x, y) => x - y);
  return {
    name,
    // 2xx answers only: a refusal (a 429 once the teams' minute is spent) is quick and would inflate the rate.
    rps: result['2xx'] / Math.max(result.duration, 0.001),
    p50: latencies.length ? quantile(latencies, 0.5) : NaN,
    p99: latencies.length ? quantile(latencies, 0.99) : NaN,
    errors: result.non2xx + result.errors,
    created: method === 'POST' ? result['2xx'] : 0,
    responses: result.requests.total,
  };
}

/** Seconds of each side's warm-up before a run's measured requests. */
const WARM_UP_S = 3;

const ratio = (x: number, y: number) => (x / Math.max(y, 0.001)).toFixed(2);

/**
 * After a warm-up of both sides, GET then POST, each direct then through the gateway, waiting before each run until the
 * relay has published every client.created so far. Returns GET direct, GET gateway, POST
 * direct, POST gateway.
 */
async function runOnce(b: Bench, sys: System, st: TreeState, tag = ''): Promise<Figures[]> {
  const figures: Figures[] = [];
  // Both sides warmed up first (reads only: nothing to count or drain).
  await measure('GET warm-up direct', sys.serviceUrls.clients, 'GET', st.teams, false, b.token, CONNECTIONS, WARM_UP_S);
  await measure('GET warm-up gateway', sys.gatewayUrl, 'GET', st.teams, true, b.token, CONNECTIONS, WARM_UP_S);
  for (const [label, method] of RUNS) {
    await st.events.drained(st.created);
    const direct = await measure(`${label} direct`, sys.serviceUrls.clients, method, st.teams, false, b.token);
    st.created += direct.created;
    await st.events.drained(st.created);
    const gated = await measure(`${label} gateway`, sys.gatewayUrl, method, st.teams, true, b.token);
    st.created += gated.created;
    figures.push(direct, gated);
    console.log(
      `${label}${tag}: ${direct.rps.toFixed(0)} req/s direct, ${gated.rps.toFixed(0)} through the gateway; gateway/direct throughput ${ratio(gated.rps, direct.rps)}, ` +
        `p50 ${ratio(gated.p50, direct.p50)}x, p99 ${ratio(gated.p99, direct.p99)}x`,
    );
  }
  await st.events.drained(st.created);
  return figures;
}

/** JSON keys of runOnce's figures: clients[.<checkout>].{get,post}.{direct,gateway}_{rps,p50_ms,p99_ms,errors} and the gateway/direct ratios. */
function recordRuns(b: Bench, prefix: string, figures: Figures[]): void {
  for (const [k, [label]] of RUNS.entries()) {
    const key = `${prefix}.${label.startsWith('GET') ? 'get' : 'post'}`;
    const [direct, gated] = [figures[2 * k], figures[2 * k + 1]];
    recordRun(b, `${key}.direct`, direct);
    recordRun(b, `${key}.gateway`, gated);
    b.record(`${key}.gateway_vs_direct_throughput`, ratioOf(gated.rps, direct.rps));
    b.record(`${key}.gateway_vs_direct_p50`, ratioOf(gated.p50, direct.p50));
  }
}

export async function clientsSection(b: Bench): Promise<void> {
  if (b.baseline) return compareTrees(b, b.baseline);
  const sys = await b.system();
  console.log(
    `clients: ${DURATION_S} s per run, ${CONNECTIONS} connections, ${TEAMS} enterprise teams, FerretDB over ${b.store.backend}`,
  );
  const figures = await runOnce(b, sys, await clientsState(b, sys));
  b.figures.push(...figures);
  recordRuns(b, 'clients', figures);
}

/** Means of one run's rounds, with each round's req/s. */
function combine(name: string, rounds: Figures[]): Figures & { byRound: number[] } {
  return { ...meanOfRounds(name, rounds), byRound: rounds.map((r) => r.rps) };
}

/**
 * This checkout against BENCH_BASELINE in one run: each checkout's system started in turn
 * (this, baseline, this, baseline), only one running at a time, on the run's store, vhost
 * and key prefix but its own database prefix and exchange; its teams made once with its
 * own CLI and kept for its second round.
 */
async function compareTrees(b: Bench, baseline: string): Promise<void> {
  const trees: Tree[] = [
    { label: 'this', root: ROOT, dbPrefix: 'bench_this_', exchange: 'bench.this.events' },
    { label: 'baseline', root: baseline, dbPrefix: 'bench_base_', exchange: 'bench.base.events' },
  ];
  console.log(
    `clients, this checkout against a baseline: ${DURATION_S} s per run, ${CONNECTIONS} connections, ${TEAMS} enterprise teams per checkout, ` +
      `${ROUNDS} rounds each, alternating; FerretDB over ${b.store.backend}`,
  );
  for (const t of trees)
    console.log(`  ${t.label}: ${t.root} (${describeTree(t.root)}), databases ${t.dbPrefix}*, exchange ${t.exchange}`);
  const states = new Map<string, TreeState>();
  const rounds = new Map<string, Figures[][]>(trees.map((t) => [t.label, []]));
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      // The checkouts in reverse order every other round: neither always goes first.
      for (const tree of round % 2 === 1 ? trees : [...trees].reverse()) {
        console.log(`\nround ${round} of ${ROUNDS}, ${tree.label}:`);
        const sys = await b.start(tree);
        try {
          let st = states.get(tree.label);
          if (!st) states.set(tree.label, (st = await prepare(b, sys)));
          rounds.get(tree.label)!.push(await runOnce(b, sys, st, `, ${tree.label}`));
        } finally {
          await sys.stop();
        }
      }
    }
  } finally {
    for (const st of states.values()) await st.events.close();
  }

  // Per checkout: each run's mean over the rounds.
  const combined = new Map<string, ReturnType<typeof combine>[]>();
  console.log(`\n| checkout | run | req/s (mean of ${ROUNDS}) | by round | p50 ms | p99 ms | non-2xx or errors |`);
  console.log('|---|---|---:|---|---:|---:|---:|');
  for (const tree of trees) {
    const runs = rounds.get(tree.label)!;
    const rows = runs[0].map((first, k) =>
      combine(
        first.name,
        runs.map((r) => r[k]),
      ),
    );
    combined.set(tree.label, rows);
    for (const r of rows) {
      console.log(
        `| ${tree.label} | ${r.name} | ${r.rps.toFixed(0)} | ${r.byRound.map((x) => x.toFixed(0)).join(', ')} | ${ms(r.p50)} | ${ms(r.p99)} | ${r.errors} |`,
      );
      b.figures.push({ ...r, name: `${r.name}, ${tree.label} (mean of ${ROUNDS} rounds)` });
    }
    recordRuns(b, `clients.${tree.label}`, rows);
  }
  // this/baseline, through the gateway (the comparison), then direct (the services alone, for reference).
  const mine = combined.get('this')!;
  const theirs = combined.get('baseline')!;
  for (const [path, offset] of [
    ['through the gateway', 1],
    ['direct (for reference)', 0],
  ] as const) {
    const parts = RUNS.map(([label], k) => {
      const [x, y] = [mine[2 * k + offset], theirs[2 * k + offset]];
      const perRound = x.byRound.map((v, i) => ratio(v, y.byRound[i])).join(', ');
      return `${label.split(' ')[0]} throughput ${ratio(x.rps, y.rps)} (by round ${perRound}), p50 ${ratio(x.p50, y.p50)}x, p99 ${ratio(x.p99, y.p99)}x`;
    });
    console.log(`this/baseline, ${path}: ${parts.join('; ')}`);
    for (const [k, [label]] of RUNS.entries()) {
      const [x, y] = [mine[2 * k + offset], theirs[2 * k + offset]];
      const key = `clients.this_vs_baseline.${label.startsWith('GET') ? 'get' : 'post'}.${offset ? 'gateway' : 'direct'}`;
      b.record(`${key}_throughput`, ratioOf(x.rps, y.rps));
      b.record(`${key}_p50`, ratioOf(x.p50, y.p50));
    }
  }
}
