// Section `writes`: what an API write costs the whole system, and how many a second
// it takes. POST /v1/clients through the gateway, no webhooks subscribed, open loop
// (each request sent at its instant whether the ones before were answered or not),
// in steps of BENCH_WRITES_STEP_SECONDS (20) at each of BENCH_WRITES_RATES
// (200,400,600,800) a second, after a warm-up of BENCH_WRITES_WARMUP_SECONDS (10)
// at the first rate, each step over fresh enterprise teams: at least 10,
// and enough that none passes 800 of its 1,000 requests a minute (20 at 800/s). A
// step is taken when its p99 is at most 250 ms and nothing was refused; the steps
// stop at the first one not taken. Per step: p50 and p99, the store commands the
// clients service sent per write (its store_commands_total), and the CPU of every
// process of the system (gateway, services, launcher, FerretDB, PostgreSQL,
// RabbitMQ, Redis; from /proc, as machine_busy_cores reads it; the bench aside) per
// write, from the first write to the last event published. Before the steps, the
// system's CPU doing nothing for BENCH_WRITES_IDLE_SECONDS (10), once warm. Then the
// same cost for PUT /v1/cases/{id} and POST /v1/activities at the first rate. Between
// them, the floor of a write at the first rate (writes-floor.ts), and the first step's
// cost over it: writes.core_ms_vs_floor.
import { SERVICE_NAMES } from './internals.ts';
import { cpuMsBetween, describeLoad, loadBetween, snapshotLoad, type Snapshot } from './machine-load.ts';
import { quantile, sleep, type Bench, type System } from './support.ts';
import { call, closeCalls, openLoop } from './open-loop.ts';
import { writeFloor } from './writes-floor.ts';
import { createTeams, type IssuedTeam } from './teams.ts';
import { commandsBetween, consumersSettled, storeCommandsOf } from './webhook-support.ts';

const RATES = (process.env.BENCH_WRITES_RATES ?? '200,400,600,800').split(',').map(Number);
const STEP_SECONDS = Number(process.env.BENCH_WRITES_STEP_SECONDS ?? 20);
/** Writes before the steps, not measured: on a system just started, its JIT, pools and caches are cold. */
const WARMUP_SECONDS = Number(process.env.BENCH_WRITES_WARMUP_SECONDS ?? 10);
const P99_LIMIT_MS = 250;
/** How long the system is watched doing nothing, after the warm-up: its CPU then is part of every write's. */
const IDLE_SECONDS = Number(process.env.BENCH_WRITES_IDLE_SECONDS ?? 10);
/** How long the events of a step may take to be published after its last answer. */
const PUBLISH_PATIENCE_MS = 60_000;
/** The processes of the system, by their kind (machine-load.ts). */
const SYSTEM_KINDS = new Set<string>([
  ...SERVICE_NAMES,
  'gateway',
  'start.ts',
  'ferretdb',
  'postgres',
  'rabbitmq',
  'redis-server',
]);

/** Fresh enterprise teams for `rate` writes a second for `seconds`: at least 10, none past 800 requests a minute. */
const teamsFor = (rate: number, seconds: number) => Math.max(10, Math.ceil((rate * Math.min(seconds, 60)) / 800));

interface Step {
  answered: number;
  refused: number;
  p50: number;
  p99: number;
  /** CPU ms of the system's processes per answered write. */
  coreMs: number;
  /** Store commands of the writing service per answered write. */
  commands: number;
  /** Store commands of the other services per answered write. */
  otherCommands: number;
}

/** A kind of write: its service (whose store commands and publishes are counted) and one request. */
interface WriteKind {
  name: string;
  serviceUrl: (sys: System) => string;
  /** The i-th request of a step, with the status that means done. */
  request(i: number): { method: string; path: string; body: unknown; status: number };
}

/** Events the service's relay has published (its outbox_publish_duration_seconds_count, outcome ok). */
async function publishedBy(serviceUrl: string): Promise<number> {
  const res = await fetch(`${serviceUrl}/metrics`);
  const line = (await res.text())
    .split('\n')
    .find((l) => l.startsWith('outbox_publish_duration_seconds_count{') && l.includes('outcome="ok"'));
  return line ? Number(line.split(' ').pop()) : 0;
}

/**
 * `kind`'s writes at `rate` a second for `seconds`, round robin over `keys`, open loop.
 * Measured from the first write to the moment the service's relay has published an
 * event per answered write.
 */
async function step(sys: System, kind: WriteKind, keys: string[], rate: number, seconds: number): Promise<Step> {
  const serviceUrl = kind.serviceUrl(sys);
  const commandsBefore = await storeCommandsOf(serviceUrl);
  const othersBefore = await othersCommands(sys, serviceUrl);
  const publishedBefore = await publishedBy(serviceUrl);
  const loadBefore: Snapshot = snapshotLoad();
  const { latencies, refused, total, slowSentAt, startedAt } = await openLoop(
    rate,
    seconds,
    P99_LIMIT_MS,
    async (i) => {
      const { method, path, body, status } = kind.request(i);
      return (await call(sys.gatewayUrl, keys[i % keys.length], method, path, body)).status === status;
    },
  );
  const deadline = Date.now() + PUBLISH_PATIENCE_MS;
  while ((await publishedBy(serviceUrl)) - publishedBefore < latencies.length && Date.now() < deadline)
    await sleep(250);
  const loadAfter = snapshotLoad();
  const commands = commandsBetween(commandsBefore, await storeCommandsOf(serviceUrl));
  const othersAfter = await othersCommands(sys, serviceUrl);
  const others = othersBetween(othersBefore, othersAfter);
  const everyKind = cpuMsBetween(loadBefore, loadAfter);
  const cpu = everyKind.filter(([k]) => SYSTEM_KINDS.has(k));
  const benchMs = everyKind.find(([k]) => k === 'bench')?.[1] ?? 0;
  const answered = latencies.length;
  const per = (n: number) => n / Math.max(answered, 1);
  const commandTotal = commands.reduce((sum, [, n]) => sum + n, 0);
  const cpuTotal = cpu.reduce((sum, [, ms]) => sum + ms, 0);
  const result: Step = {
    answered,
    refused,
    p50: answered ? quantile(latencies, 0.5) : NaN,
    p99: answered ? quantile(latencies, 0.99) : NaN,
    coreMs: per(cpuTotal),
    commands: per(commandTotal),
    otherCommands: per(others.reduce((sum, [, n]) => sum + n, 0)),
  };
  console.log(
    `  ${kind.name} at ${rate}/s for ${seconds} s over ${keys.length} teams: ${answered} of ${total} done (${refused} refused or failed), p50 ${result.p50.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms`,
  );
  if (slowSentAt.length > 0)
    console.log(
      `    ${slowSentAt.length} writes over ${P99_LIMIT_MS} ms, sent ${describeSpread(slowSentAt)} into the step (begun ${new Date(startedAt).toISOString()})`,
    );
  console.log(
    `    core-ms a write ${result.coreMs.toFixed(2)}: ${cpu.map(([k, ms]) => `${k} ${per(ms).toFixed(2)}`).join(', ')} (the bench's load ${per(benchMs).toFixed(2)} beside)`,
  );
  logCommands(result, commands, others, per);
  return result;
}

/** The store commands of a step's writes: the writing service's busiest ten, and every other service's busiest three. */
function logCommands(
  result: Step,
  commands: [string, number][],
  others: [string, number, [string, number][]][],
  per: (n: number) => number,
): void {
  console.log(
    `    store commands a write ${result.commands.toFixed(2)}: ${commands
      .slice(0, 10)
      .map(([k, n]) => `${k} ${per(n).toFixed(3)}`)
      .join(', ')}`,
  );
  console.log(
    `    the other services' store commands a write ${result.otherCommands.toFixed(2)}: ${others
      .map(
        ([k, n, by]) =>
          `${k} ${per(n).toFixed(3)} (${by
            .slice(0, 3)
            .map(([c, m]) => `${c} ${per(m).toFixed(3)}`)
            .join(', ')})`,
      )
      .join(', ')}`,
  );
}

/** Where in a step the slow writes were sent: the first eight tenths of a second that sent any, and how many (`0.0-0.1 s: 40, ...`). */
function describeSpread(sentAt: number[]): string {
  const byTenth = new Map<number, number>();
  for (const ms of sentAt) byTenth.set(Math.floor(ms / 100), (byTenth.get(Math.floor(ms / 100)) ?? 0) + 1);
  const tenths = [...byTenth].sort(([a], [b]) => a - b);
  const shown = tenths.slice(0, 8).map(([t, n]) => `${(t / 10).toFixed(1)}-${((t + 1) / 10).toFixed(1)} s: ${n}`);
  return tenths.length > 8 ? `${shown.join(', ')} and in ${tenths.length - 8} tenths more` : shown.join(', ');
}

/** Per other service with any, its store commands between two readings: in all, and by command. */
const othersBetween = (
  before: [string, Map<string, number>][],
  after: [string, Map<string, number>][],
): [string, number, [string, number][]][] =>
  before
    .map(([name, was], i): [string, number, [string, number][]] => {
      const between = commandsBetween(was, after[i][1]);
      return [name, between.reduce((sum, [, n]) => sum + n, 0), between];
    })
    .filter(([, n]) => n > 0);

/** Every other service's store commands (storeCommandsOf), by service. */
const othersCommands = (sys: System, writer: string) =>
  Promise.all(
    Object.entries(sys.serviceUrls)
      .filter(([, url]) => url !== writer)
      .map(async ([name, url]): Promise<[string, Map<string, number>]> => [name, await storeCommandsOf(url)]),
  );

function recordStep(b: Bench, prefix: string, s: Step): void {
  b.record(`${prefix}.p50_ms`, s.p50);
  b.record(`${prefix}.p99_ms`, s.p99);
  b.record(`${prefix}.answered`, s.answered);
  b.record(`${prefix}.refused`, s.refused);
  b.record(`${prefix}.core_ms_per_write`, s.coreMs);
  b.record(`${prefix}.store_commands_per_write`, s.commands);
  b.record(`${prefix}.other_store_commands_per_write`, s.otherCommands);
}

/** POST /v1/<service> of the record `body(i)`: each request creates one. */
const posts = (service: 'clients' | 'activities', body: (i: number) => object): WriteKind => ({
  name: `POST /v1/${service}`,
  serviceUrl: (sys) => sys.serviceUrls[service],
  request: (i) => ({ method: 'POST', path: `/v1/${service}`, body: body(i), status: 201 }),
});

const clientPosts = posts('clients', (i) => ({ type: 'PJ', name: `Writes bench ${i}`, segment: 'regular' }));
const activityPosts = posts('activities', (i) => ({ type: 'task', title: `Writes bench ${i}` }));

/** PUT /v1/cases/{id} over `cases` (each team's own, `cases[n]` of team n), each a new title: every PUT changes its case. */
const casePuts = (cases: string[][]): WriteKind => ({
  name: 'PUT /v1/cases/{id}',
  serviceUrl: (sys) => sys.serviceUrls.cases,
  request: (i) => {
    const ofTeam = cases[i % cases.length];
    const id = ofTeam[Math.floor(i / cases.length) % ofTeam.length];
    return { method: 'PUT', path: `/v1/cases/${id}`, body: { title: `Writes bench case ${id} v${i}` }, status: 200 };
  },
});

/** `perTeam` cases for each team, 8 requests at a time; their ids by team. */
async function makeCases(sys: System, teams: IssuedTeam[], perTeam: number): Promise<string[][]> {
  const cases: string[][] = teams.map(() => []);
  const jobs = teams.flatMap((_, t) => Array.from({ length: perTeam }, (_, k) => ({ t, k })));
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let j = next++; j < jobs.length; j = next++) {
        const { t, k } = jobs[j];
        const res = await call(sys.gatewayUrl, teams[t].api_key, 'POST', '/v1/cases', {
          title: `Writes bench case ${t}.${k}`,
        });
        if (res.status !== 201) throw new Error(`POST /v1/cases answered ${res.status}: ${await res.text()}`);
        cases[t].push((JSON.parse(await res.text()) as { data: { id: string } }).data.id);
      }
    }),
  );
  return cases;
}

export async function writesSection(b: Bench): Promise<void> {
  try {
    await writeSteps(b);
  } finally {
    await closeCalls();
  }
}

/** Fresh teams named `<label> <n>`, and their keys. */
async function keysOf(
  b: Bench,
  sys: System,
  count: number,
  label: string,
): Promise<{ teams: IssuedTeam[]; keys: string[] }> {
  const teams = await createTeams(
    b,
    sys.tree,
    Array.from({ length: count }, (_, t) => `${label} ${t}`),
  );
  return { teams, keys: teams.map((t) => t.api_key) };
}

async function writeSteps(b: Bench): Promise<void> {
  const sys = await b.system();
  console.log(
    `writes: POST /v1/clients through the gateway, open loop, ${STEP_SECONDS} s at each of ${RATES.join(', ')} writes/s, no webhooks subscribed`,
  );
  if (WARMUP_SECONDS > 0) {
    const { keys } = await keysOf(b, sys, teamsFor(RATES[0], WARMUP_SECONDS), 'Bench writes warm-up');
    console.log('  warm-up (not a figure):');
    await step(sys, clientPosts, keys, RATES[0], WARMUP_SECONDS);
  }
  await consumersSettled(b.vhost, sys.tree.exchange);
  const idle = await idleSystem(b);
  let capacity = 0;
  let first: Step | null = null;
  for (const [n, rate] of RATES.entries()) {
    const { keys } = await keysOf(b, sys, teamsFor(rate, STEP_SECONDS), `Bench writes ${rate}.`);
    const s = await step(sys, clientPosts, keys, rate, STEP_SECONDS);
    recordStep(b, `writes.${rate}`, s);
    first ??= s;
    await consumersSettled(b.vhost, sys.tree.exchange);
    if (s.refused > 0 || !(s.p99 <= P99_LIMIT_MS)) {
      const rest = n + 1 < RATES.length ? '; the higher rates are not tried' : '';
      console.log(`  ${rate}/s not taken (p99 ${s.p99.toFixed(0)} ms, ${s.refused} refused)${rest}`);
      break;
    }
    capacity = rate;
  }
  b.record('writes.capacity_per_s', capacity);
  if (first) {
    b.record('writes.core_ms_per_write', first.coreMs);
    b.record('writes.store_commands_per_write', first.commands);
    const floorRun = { rate: RATES[0], seconds: STEP_SECONDS, warmupSeconds: WARMUP_SECONDS, slowMs: P99_LIMIT_MS };
    const floor = await writeFloor(b, floorRun, idle);
    b.record('writes.floor.core_ms_per_write', floor.coreMs);
    b.record('writes.floor.p50_ms', floor.p50);
    b.record('writes.floor.p99_ms', floor.p99);
    b.record('writes.core_ms_vs_floor', first.coreMs / floor.coreMs);
  }
  await otherWrites(b, sys);
}

/**
 * The system's CPU with no request, once warm: `writes.idle_cores`. It is in every
 * step's core_ms_per_write (at 200 writes a second, 0.1 core idle is 0.5 core-ms a write).
 */
async function idleSystem(b: Bench): Promise<Map<string, number>> {
  const before = snapshotLoad();
  await sleep(IDLE_SECONDS * 1000);
  const after = snapshotLoad();
  const wallMs = after.at - before.at;
  const cpu = cpuMsBetween(before, after).filter(([k]) => SYSTEM_KINDS.has(k));
  const idle = cpu.reduce((sum, [, ms]) => sum + ms, 0) / wallMs;
  b.record('writes.idle_cores', idle);
  const byKind = new Map(cpu.map(([k, ms]) => [k, ms / wallMs]));
  console.log(
    `  the system idle for ${IDLE_SECONDS} s, warm: ${idle.toFixed(2)} cores (${cpu.map(([k, ms]) => `${k} ${(ms / wallMs).toFixed(3)}`).join(', ')}); the machine ${describeLoad(loadBetween(before, after))}`,
  );
  return byKind;
}

/** The same cost for PUT /v1/cases/{id} and POST /v1/activities, at the first rate. */
async function otherWrites(b: Bench, sys: System): Promise<void> {
  const rate = RATES[0];
  const teamCount = teamsFor(rate, STEP_SECONDS);
  // Each case written about ten times over the step.
  const perTeam = Math.max(2, Math.ceil((rate * STEP_SECONDS) / teamCount / 10));
  const caseTeams = await keysOf(b, sys, teamCount, 'Bench writes cases');
  const cases = await makeCases(sys, caseTeams.teams, perTeam);
  await consumersSettled(b.vhost, sys.tree.exchange);
  recordStep(b, 'writes.cases_put', await step(sys, casePuts(cases), caseTeams.keys, rate, STEP_SECONDS));
  await consumersSettled(b.vhost, sys.tree.exchange);
  const activityTeams = await keysOf(b, sys, teamCount, 'Bench writes activities');
  recordStep(b, 'writes.activities_post', await step(sys, activityPosts, activityTeams.keys, rate, STEP_SECONDS));
  await consumersSettled(b.vhost, sys.tree.exchange);
}
