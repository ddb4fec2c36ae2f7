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

interface BenchTeam {
  key: string;
  identity: Identity;
  clientId: string;
}

/** A checkout's teams (each with one client to GET) and its count of client.created events. */
interface TreeState {
  teams: BenchTeam[];
  events: EventCounter;
  /** client.created events written so far. */
  created: number;
}

async function prepare(b: Bench, sys: System): Promise<TreeState> {
  const started = Date.now();
  const issued = await createTeams(b, sys.tree, Array.from({ length: TEAMS }, (_, n) => `Bench ${n}`));
  console.log(`  ${TEAMS} enterprise teams made with the operator CLI of ${sys.tree.root} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const events = await createdEventCounter(b.amqpUrl, sys.tree.exchange);
  const teams: BenchTeam[] = [];
  for (const [n, t] of issued.entries()) {
    const identity = identityOf(t);
    const res = await fetch(`${sys.clientsUrl}/v1/clients`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...identityHeaders(identity, b.token) },
      body: JSON.stringify({ type: 'PF', name: `Cliente ${n}` }),
    });
    if (res.status !== 201) throw new Error(`POST /v1/clients answered ${res.status}: ${await res.text()}`);
    teams.push({ key: t.api_key, identity, clientId: ((await res.json()) as { data: { id: string } }).data.id });
  }
  return { teams, events, created: teams.length };
}

async function measure(name: string, url: string, method: 'GET' | 'POST', teams: BenchTeam[], viaGateway: boolean, token: string): Promise<Figures> {
  let i = 0;
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: DURATION_S,
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
            ...(method === 'POST' ? { body: JSON.stringify({ type: 'PJ', name: `Bench ${i}`, segment: 'regular' }) } : {}),
          };
        },
      },
    ],
  });
  return {
    name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.non2xx + result.errors,
    created: method === 'POST' ? result['2xx'] : 0,
  };
}

const ratio = (x: number, y: number) => (x / Math.max(y, 0.001)).toFixed(2);

/**
 * GET then POST, each direct then through the gateway, waiting before each run until the
 * relay has published every client.created so far. Returns GET direct, GET gateway, POST
 * direct, POST gateway.
 */
async function runOnce(b: Bench, sys: System, st: TreeState, tag = ''): Promise<Figures[]> {
  const figures: Figures[] = [];
  for (const [label, method] of RUNS) {
    await st.events.drained(st.created);
    const direct = await measure(`${label} direct`, sys.clientsUrl, method, st.teams, false, b.token);
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

export async function clientsSection(b: Bench): Promise<void> {
  if (b.baseline) return compareTrees(b, b.baseline);
  const sys = await b.system();
  console.log(`clients: ${DURATION_S} s per run, ${CONNECTIONS} connections, ${TEAMS} enterprise teams, FerretDB over ${b.store.backend}`);
  const st = await prepare(b, sys);
  try {
    b.figures.push(...(await runOnce(b, sys, st)));
  } finally {
    await st.events.close();
  }
}

/** Means of one run's rounds (latencies: the mean of each round's percentile). */
function combine(name: string, rounds: Figures[]): Figures & { byRound: number[] } {
  const mean = (f: (x: Figures) => number) => rounds.reduce((sum, r) => sum + f(r), 0) / rounds.length;
  return {
    name,
    rps: mean((r) => r.rps),
    p50: Math.round(mean((r) => r.p50)),
    p99: Math.round(mean((r) => r.p99)),
    errors: rounds.reduce((sum, r) => sum + r.errors, 0),
    created: rounds.reduce((sum, r) => sum + r.created, 0),
    byRound: rounds.map((r) => r.rps),
  };
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
  for (const t of trees) console.log(`  ${t.label}: ${t.root} (${describeTree(t.root)}), databases ${t.dbPrefix}*, exchange ${t.exchange}`);
  const states = new Map<string, TreeState>();
  const rounds = new Map<string, Figures[][]>(trees.map((t) => [t.label, []]));
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      for (const tree of trees) {
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
    const rows = runs[0].map((first, k) => combine(first.name, runs.map((r) => r[k])));
    combined.set(tree.label, rows);
    for (const r of rows) {
      console.log(`| ${tree.label} | ${r.name} | ${r.rps.toFixed(0)} | ${r.byRound.map((x) => x.toFixed(0)).join(', ')} | ${r.p50} | ${r.p99} | ${r.errors} |`);
      b.figures.push({ ...r, name: `${r.name}, ${tree.label} (mean of ${ROUNDS} rounds)` });
    }
  }
  // this/baseline, through the gateway (the comparison), then direct (the services alone, for reference).
  const mine = combined.get('this')!;
  const theirs = combined.get('baseline')!;
  for (const [path, offset] of [['through the gateway', 1], ['direct (for reference)', 0]] as const) {
    const parts = RUNS.map(([label], k) => {
      const [x, y] = [mine[2 * k + offset], theirs[2 * k + offset]];
      const perRound = x.byRound.map((v, i) => ratio(v, y.byRound[i])).join(', ');
      return `${label.split(' ')[0]} throughput ${ratio(x.rps, y.rps)} (by round ${perRound}), p50 ${ratio(x.p50, y.p50)}x, p99 ${ratio(x.p99, y.p99)}x`;
    });
    console.log(`this/baseline, ${path}: ${parts.join('; ')}`);
  }
}
