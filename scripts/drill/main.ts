// `npm run drill -- [--writes N] [--json FILE] [--short] [--cluster N]`: the fault drill. Starts
// the system under its supervising launcher, behind TCP proxies to the store and the
// broker, with a webhook receiver subscribed to every event of every team. Drives at
// least N writes (default 10,000) at about 100 a second across the five domain
// services, and meanwhile restarts the broker, cuts the store for 60 s (SIGKILLing
// the activities service halfway through), hangs it for 20 s and SIGKILLs every
// process once (--short: outages of a few seconds, for CI). With --cluster N (3 or
// more) the broker is a RabbitMQ cluster of the drill's own (scripts/cluster) and the
// faults are cluster-faults.ts's instead: nodes SIGKILLed and frozen, Redis cut;
// it then also fails when an event took more than a minute from its write's answer.
// Then it waits for quiet and writes a report: writes acknowledged and refused,
// events expected, delivered, duplicated and lost, events left dead-lettered (or
// parked) in the system's queues, answers outside the envelope, and whether the
// state agrees with the acknowledged writes. Exits 1 when anything is lost or
// dead-lettered, an answer falls outside the envelope, the state disagrees, a fault
// could not be done, or the launcher ended (then at once, with a report of what was
// done). SIGINT and SIGTERM remove what it made (its system, FerretDB, database,
// vhost, Redis keys and files) before it exits.
//
// Under Jest (test/global-setup.ts) it uses the run's store, vhost, Redis prefix and
// test CA; alone it makes its own and removes them at the end.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { EVENT_TYPES } from '../../shared/src/events.ts';
import { startFerretdb } from '../local-store.ts';
import { SERVICE_NAMES } from '../../shared/src/service/names.ts';
import { startHttpsReceiver, type HttpsReceiver } from '@lpm/test-kit/https-receiver';
import { startTcpProxy, type TcpProxy } from '@lpm/test-kit/tcp-proxy';
import { createTestTls } from '@lpm/test-kit/test-ca';
import { addVhost, ensureRabbitmq, ensureRedis } from '../local-servers.ts';
import { freePortBlock, startSystem, type Launcher } from '../system.ts';
import { drillFaults, runFaults, type Fault, type FaultDurations, type FaultLog } from './faults.ts';
import { launcherEnd } from './launcher.ts';
import { DrillResources } from './resources.ts';
import { countEvents, maxEventDelayMs, stateDisagreements, waitForQuiet, type EventCount } from './verdict.ts';
import { clusterFaults } from './cluster-faults.ts';
import { clusterUrl, type Cluster } from '../cluster/cluster.ts';
import { startPrivateCluster } from '../cluster/for-start.ts';
import { Workload, type DrillTeam, type Story } from './workload.ts';

interface DrillArgs {
  writes: number;
  json?: string;
  short: boolean;
  /** Nodes of the drill's own RabbitMQ cluster; 0: the machine's broker through a proxy. */
  cluster: number;
}

function parseArgs(argv: string[]): DrillArgs {
  const args: DrillArgs = { writes: 10_000, short: false, cluster: 0 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--writes') args.writes = Number(argv[++i]);
    else if (a === '--json') args.json = argv[++i];
    else if (a === '--short') args.short = true;
    else if (a === '--cluster') args.cluster = Number(argv[++i]);
    else throw new Error(`unknown option ${a}; usage: npm run drill -- [--writes N] [--json FILE] [--short] [--cluster N]`);
  }
  if (!Number.isInteger(args.writes) || args.writes < 100) throw new Error('--writes must be an integer of at least 100');
  if (args.json === undefined && argv.includes('--json')) throw new Error('--json needs a file name');
  if (!Number.isInteger(args.cluster) || args.cluster === 1 || args.cluster === 2 || args.cluster < 0 || args.cluster > 9) throw new Error('--cluster needs 3 to 9 nodes');
  return args;
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TEAMS = 10; // enterprise teams take 1,000 requests a minute each: 10 take the drill's 100 writes a second with room
const ACTORS = 20;
const RATE = 100;
const FULL: FaultDurations = { brokerDownMs: 10_000, storeCutMs: 60_000, storeHangMs: 20_000 };
const SHORT: FaultDurations = { brokerDownMs: 3000, storeCutMs: 8000, storeHangMs: 8000 };
/** How long a cluster node is down or frozen, and Redis out. */
const NODE_OUTAGE_MS = 20_000;
/** On a cluster, the longest a write's event may take to its delivery: a node lost is not a minute's outage. */
const MAX_EVENT_DELAY_MS = 60_000;

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  const underJest = Boolean(process.env.LPM_TEST_RUN);
  const run = `${Date.now().toString(36)}${process.pid.toString(36)}`;
  const dir = mkdtempSync(join(tmpdir(), `lpm-drill-${run}-`));
  const made = new DrillResources(dir);
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    process.once(signal, () => {
      console.log(`drill: ${signal}; removing what the drill made`);
      void made.remove().finally(() => process.exit(code));
    });
  }
  console.log(`drill: run ${run}`);
  try {
    const urls = await storeAndBroker(made, dir, run, underJest);
    const { storeProxy, brokerProxy, storeUrl, brokerUrl } = await startProxies(made, urls);
    const onCluster = args.cluster > 0 ? await brokerCluster(made, args.cluster) : null;

    const receiver = await startHttpsReceiver();
    made.closers.push(() => receiver.close());
    const port = await freePortBlock();
    const dbPrefix = `${process.env.MONGO_DB_PREFIX ?? ''}drill${run}_`;
    const env = systemEnv({ port, storeUrl, brokerUrl, dbPrefix, redisPrefix: made.redisPrefix! });
    if (onCluster) Object.assign(env, { AMQP_URL: clusterUrl(onCluster.cluster), REDIS_URL: onCluster.redisUrl });
    const launcher = await startSystem(env, 120_000);
    made.launcher = launcher;
    // From here on, every wait ends when the launcher does: the drill then fails with a report.
    const watch = watchLauncher(launcher, made);
    const gatewayUrl = `http://127.0.0.1:${port}`;
    console.log(`drill: the system on ${gatewayUrl} (PORT..PORT+7), launcher pid ${launcher.pid}`);
    const teams = await createTeams(gatewayUrl, env, receiver.url);
    const nodeFaults = onCluster && clusterFaults({ cluster: onCluster.cluster, vhost: '/', redis: onCluster.redis, outageMs: NODE_OUTAGE_MS });
    const faults = nodeFaults?.faults ?? drillFaults({ store: storeProxy, broker: brokerProxy, launcherPid: launcher.pid!, durations: args.short ? SHORT : FULL, processes: ['gateway', ...SERVICE_NAMES] });
    const broker: BrokerSide = onCluster
      ? { vhost: '/', node: onCluster.cluster.nodes[0].node, nodes: args.cluster, failovers: () => nodeFaults!.failovers() }
      : { vhost: decodeURIComponent(brokerUrl.pathname.slice(1)) || '/', nodes: 1, failovers: () => 0 };
    return await drill({ args, watch, gatewayUrl, teams, receiver, faults, broker, dbPrefix });
  } finally {
    await made.remove();
  }
}

/** Under Jest, the run's store and broker; alone, a test CA, a FerretDB and a vhost of the drill's own. */
async function storeAndBroker(made: DrillResources, dir: string, run: string, underJest: boolean): Promise<{ mongoUrl: string; amqpUrl: string }> {
  let mongoUrl = process.env.MONGO_URL;
  let amqpUrl = process.env.AMQP_URL;
  made.redisPrefix = `${process.env.REDIS_KEY_PREFIX ?? ''}drill-${run}:`;
  if (!underJest) {
    const tls = createTestTls(join(dir, 'tls'), process.env.NODE_EXTRA_CA_CERTS);
    process.env.LPM_TEST_TLS_DIR = tls.dir;
    process.env.NODE_EXTRA_CA_CERTS = tls.caBundle;
    await Promise.all([ensureRabbitmq(), ensureRedis()]);
    made.database = `lpm_drill_${run}`;
    made.store = await startFerretdb({ dataDir: join(dir, 'ferretdb'), database: made.database });
    mongoUrl = made.store.url;
    const vhost = `lpm-drill-${run}`;
    addVhost(vhost);
    made.vhost = vhost;
    amqpUrl = `amqp://guest:guest@127.0.0.1:5672/${encodeURIComponent(vhost)}`;
    made.redisPrefix = `lpm-drill-${run}:`;
  }
  return { mongoUrl: mongoUrl!, amqpUrl: amqpUrl! };
}

/** The drill's own RabbitMQ cluster, and a TCP proxy to Redis the faults cut (the machine's Redis keeps serving). */
async function brokerCluster(made: DrillResources, size: number): Promise<{ cluster: Cluster; redis: TcpProxy; redisUrl: string }> {
  console.log(`drill: starting a RabbitMQ cluster of ${size}`);
  const cluster = await startPrivateCluster(size, 'drill');
  made.cluster = cluster;
  console.log(`drill: the cluster's nodes ${cluster.nodes.map((n) => n.node).join(', ')} in ${cluster.root}`);
  const direct = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const redis = await startTcpProxy(direct.hostname, Number(direct.port || 6379));
  made.closers.push(() => redis.close());
  direct.host = `127.0.0.1:${redis.port}`;
  return { cluster, redis, redisUrl: direct.toString() };
}

/** TCP proxies to the store and the broker (the faults cut and hang them), and the URLs through them. */
async function startProxies(made: DrillResources, urls: { mongoUrl: string; amqpUrl: string }) {
  const storeUrl = new URL(urls.mongoUrl);
  const brokerUrl = new URL(urls.amqpUrl);
  const storeProxy = await startTcpProxy(storeUrl.hostname, Number(storeUrl.port));
  const brokerProxy = await startTcpProxy(brokerUrl.hostname, Number(brokerUrl.port || 5672));
  made.closers.push(() => storeProxy.close(), () => brokerProxy.close());
  storeUrl.port = String(storeProxy.port);
  brokerUrl.port = String(brokerProxy.port);
  return { storeProxy, brokerProxy, storeUrl, brokerUrl };
}

function systemEnv(s: { port: number; storeUrl: URL; brokerUrl: URL; dbPrefix: string; redisPrefix: string }): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(s.port),
    MONGO_URL: s.storeUrl.toString(),
    MONGO_DB_PREFIX: s.dbPrefix,
    AMQP_URL: s.brokerUrl.toString(),
    AMQP_EXCHANGE: `${s.dbPrefix}events`,
    REDIS_KEY_PREFIX: s.redisPrefix,
    LOG_LEVEL: 'error',
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
    WEBHOOK_RETRY_DELAYS: '2s,5s,10s,30s,60s',
    // The receiver runs in this process beside the proxies and the actors: on a loaded
    // machine it can take past the default 5 s to answer a burst, and six such timeouts
    // in a row deactivate a team's webhook (docs/decisions.md §5 "Webhooks"), which the drill would count
    // as lost events. Its slowness is not a fault under test.
    WEBHOOK_TIMEOUT_MS: '30000',
  };
  delete env.LOCAL_STORE_PORT;
  return env;
}

/** How the launcher ended (null while it runs), and `gone`, settled when it ends. */
interface LauncherWatch {
  ended: string | null;
  gone: Promise<void>;
  /** `work`, or the launcher's end if that comes first. */
  untilGone(work: Promise<unknown>): Promise<unknown>;
}

function watchLauncher(launcher: Launcher, made: DrillResources): LauncherWatch {
  const watch: LauncherWatch = {
    ended: null,
    gone: launcherEnd(launcher).then((how) => {
      if (made.removing) return;
      watch.ended = how;
      console.log(`drill: the launcher ended (${how}); stopping the writes`);
    }),
    untilGone: (work) => Promise.race([work, watch.gone]),
  };
  return watch;
}

/** TEAMS enterprise teams made with the CLI, each with a webhook on every event to its own path of the receiver. */
async function createTeams(gatewayUrl: string, env: NodeJS.ProcessEnv, receiverUrl: string): Promise<DrillTeam[]> {
  const teams: DrillTeam[] = [];
  for (let i = 0; i < TEAMS; i++) {
    // Asynchronously: the proxies run in this process, which a synchronous spawn would block.
    const cli = await promisify(execFile)(
      process.execPath,
      ['gateway/src/cli/main.ts', 'team', 'create', '--name', `Drill ${i}`, '--plan', 'enterprise', '--owner-name', `Dona ${i}`, '--owner-email', `dona${i}@drill.example`, '--json'],
      { cwd: ROOT, env, encoding: 'utf8' },
    );
    const issued = JSON.parse(cli.stdout.trim().split('\n').pop()!);
    teams.push({ id: issued.team.id, apiKey: issued.api_key });
    const hook = await fetch(`${gatewayUrl}/v1/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${issued.api_key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${receiverUrl}/drill/${i}`, events: [...EVENT_TYPES] }),
    });
    if (hook.status !== 201) throw new Error(`webhook create: ${hook.status} ${await hook.text()}`);
  }
  return teams;
}

interface Drill {
  args: DrillArgs;
  watch: LauncherWatch;
  gatewayUrl: string;
  teams: DrillTeam[];
  receiver: HttpsReceiver;
  faults: Fault[];
  broker: BrokerSide;
  dbPrefix: string;
}

/** The writes beside the faults, then the wait for quiet and the verdict: 0 when the drill passed, 1 when not. */
async function drill(d: Drill): Promise<number> {
  const { args, watch, faults } = d;
  const faultLog: FaultLog[] = [];
  let faultsLeft = true;
  const workload = new Workload({
    gatewayUrl: d.gatewayUrl,
    teams: d.teams,
    writes: args.writes,
    rate: RATE,
    actors: ACTORS,
    giveUpMs: (args.short ? SHORT : FULL).storeCutMs + 120_000,
    keepGoing: () => faultsLeft && watch.ended === null,
  });
  const started = Date.now();
  console.log(`drill: ${args.writes} writes at ${RATE}/s over ${TEAMS} teams; faults: ${faults.map((f) => f.name).join(', ')}`);
  void watch.gone.then(() => workload.stop());
  await watch.untilGone(Promise.all([workload.run(), runFaults(faults, args.writes, () => workload.done, faultLog, () => watch.ended !== null, args.cluster > 0).finally(() => (faultsLeft = false))]));
  const writeSeconds = (Date.now() - started) / 1000;
  console.log(`drill: ${workload.done} writes in ${writeSeconds.toFixed(0)} s; waiting for quiet`);

  const expected = workload.tally.expected;
  // Quiet: longer than the longest retry delay on the way (60 s: a consumer's transient retries, a webhook's last attempts).
  await watch.untilGone(waitForQuiet(d.receiver.requests, expected, 150_000, 900_000));
  const events = countEvents(d.receiver.requests, expected);
  const state: StateCheck = { problems: [], inactive: [] };
  if (watch.ended === null) await watch.untilGone(checkState(state, d.gatewayUrl, d.teams, workload.stories));
  if (watch.ended !== null) state.problems = ['not checked: the launcher ended'];
  const dead = await deadLettered(d.broker, `${d.dbPrefix}events.`);
  const delay = maxEventDelayMs(d.receiver.requests, workload.tally.answeredAt);
  const report = {
    ...reportOf({ launcherEnded: watch.ended, workload, writeSeconds, events, dead, state, faultLog }),
    'broker.nodes': d.broker.nodes,
    'broker.failovers': d.broker.failovers(),
    'events.max_delay_ms': delay.ms,
    'events.max_delay_event': delay.event,
  };
  console.log(JSON.stringify(report, null, 2));
  if (args.json) writeFileSync(args.json, `${JSON.stringify(report, null, 2)}\n`);
  const ok =
    watch.ended === null &&
    events.lost.length === 0 &&
    Object.keys(dead).length === 0 &&
    workload.tally.outsideEnvelope === 0 &&
    state.problems.length === 0 &&
    faultLog.filter((f) => f.detail).length === 0 &&
    faultLog.length === faults.length &&
    (args.cluster === 0 || delay.ms <= MAX_EVENT_DELAY_MS);
  console.log(ok ? 'drill: passed' : 'drill: FAILED');
  return ok ? 0 : 1;
}

interface StateCheck {
  /** Where the state disagrees with the acknowledged writes. */
  problems: string[];
  /** Webhooks deactivated, as `<team> <webhook>`. */
  inactive: string[];
}

async function checkState(state: StateCheck, gatewayUrl: string, teams: DrillTeam[], stories: Story[]): Promise<void> {
  state.problems = await settledDisagreements(gatewayUrl, teams, stories);
  for (const team of teams) {
    const hooks = await fetch(`${gatewayUrl}/v1/webhooks`, { headers: { authorization: `Bearer ${team.apiKey}` } }).then((r) => r.json() as Promise<{ data?: { id: string; active: boolean }[] }>);
    for (const h of hooks.data ?? []) if (h.active === false) state.inactive.push(`${team.id} ${h.id}`);
  }
}

/** Derived state (counts kept from events, owed occurrences a repair job stores) settles after the events: asked again for a while. */
async function settledDisagreements(gatewayUrl: string, teams: DrillTeam[], stories: Story[]): Promise<string[]> {
  let found = await stateDisagreements(gatewayUrl, teams, stories);
  for (const settleBy = Date.now() + 120_000; found.length > 0 && Date.now() < settleBy; ) {
    await new Promise((r) => setTimeout(r, 10_000));
    found = await stateDisagreements(gatewayUrl, teams, stories);
  }
  return found;
}

function reportOf(r: {
  launcherEnded: string | null;
  workload: Workload;
  writeSeconds: number;
  events: EventCount;
  dead: Record<string, number>;
  state: StateCheck;
  faultLog: FaultLog[];
}) {
  const { tally, stories } = r.workload;
  return {
    'launcher.ended': r.launcherEnded,
    'writes.acknowledged': tally.acknowledged,
    'writes.refused': Object.values(tally.refused).reduce((a, b) => a + b, 0),
    'writes.refused_by_status': tally.refused,
    'writes.refused_sample': tally.refusedSamples,
    'writes.retried_by_status': tally.retried,
    'writes.seconds': r.writeSeconds,
    'events.expected': tally.expected.size,
    'events.delivered': r.events.delivered,
    'events.duplicated': r.events.duplicated,
    'events.lost': r.events.lost.length,
    'events.lost_sample': r.events.lost.slice(0, 20),
    'events.dead_lettered': Object.values(r.dead).reduce((a, b) => a + b, 0),
    'events.dead_lettered_by_queue': r.dead,
    'webhooks.deactivated': r.state.inactive,
    'answers.outside_envelope': tally.outsideEnvelope,
    'answers.outside_sample': tally.outsideSamples,
    'stories.total': stories.length,
    'stories.uncertain': stories.filter((s) => s.uncertain).length,
    'state.agrees': r.state.problems.length === 0,
    'state.disagreements': r.state.problems.slice(0, 50),
    faults: r.faultLog,
  };
}

/** The broker the system ran on: the machine's (one node) or the drill's cluster (asked through `node`). */
interface BrokerSide {
  vhost: string;
  node?: string;
  nodes: number;
  failovers(): number;
}

/** Messages left in the system's dead-letter and parking queues (names under `prefix`), by queue: work a consumer never did. */
async function deadLettered(broker: BrokerSide, prefix: string): Promise<Record<string, number>> {
  const target = broker.node ? ['-n', broker.node] : [];
  const args = [...target, 'list_queues', '-p', broker.vhost, '-q', '--no-table-headers', 'name', 'messages'];
  const { stdout } = await promisify(execFile)('rabbitmqctl', args, { encoding: 'utf8' });
  const dead: Record<string, number> = {};
  for (const line of stdout.split('\n')) {
    const [name, count] = line.trim().split(/\s+/);
    if (name?.startsWith(prefix) && (name.endsWith('.dlq') || name.endsWith('.unrouted')) && Number(count) > 0) dead[name] = Number(count);
  }
  return dead;
}

// Exits at once when done: after the launcher ended, waits it gave up on may still be pending.
try {
  process.exit(await main());
} catch (e) {
  console.error(`drill: ${(e as Error).stack ?? String(e)}`);
  process.exit(2);
}
