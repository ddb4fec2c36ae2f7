// `npm run drill -- [--writes N] [--json FILE] [--short]`: the fault drill. Starts
// the system under its supervising launcher, behind TCP proxies to the store and the
// broker, with a webhook receiver subscribed to every event of every team. Drives at
// least N writes (default 10,000) at about 100 a second across the five domain
// services, and meanwhile restarts the broker, cuts the store for 60 s (SIGKILLing
// the activities service halfway through), hangs it for 20 s and SIGKILLs every
// process once (--short: outages of a few seconds, for CI).
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
import { startHttpsReceiver } from '@lpm/test-kit/https-receiver';
import { startTcpProxy } from '@lpm/test-kit/tcp-proxy';
import { createTestTls } from '@lpm/test-kit/test-ca';
import { addVhost, ensureRabbitmq, ensureRedis } from '../local-servers.ts';
import { freePortBlock, startSystem } from '../system.ts';
import { drillFaults, runFaults, type FaultDurations, type FaultLog } from './faults.ts';
import { launcherEnd } from './launcher.ts';
import { DrillResources } from './resources.ts';
import { countEvents, stateDisagreements, waitForQuiet } from './verdict.ts';
import { Workload, type DrillTeam } from './workload.ts';

interface DrillArgs {
  writes: number;
  json?: string;
  short: boolean;
}

function parseArgs(argv: string[]): DrillArgs {
  const args: DrillArgs = { writes: 10_000, short: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--writes') args.writes = Number(argv[++i]);
    else if (a === '--json') args.json = argv[++i];
    else if (a === '--short') args.short = true;
    else throw new Error(`unknown option ${a}; usage: npm run drill -- [--writes N] [--json FILE] [--short]`);
  }
  if (!Number.isInteger(args.writes) || args.writes < 100) throw new Error('--writes must be an integer of at least 100');
  if (args.json === undefined && argv.includes('--json')) throw new Error('--json needs a file name');
  return args;
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TEAMS = 10; // enterprise teams take 1,000 requests a minute each: 10 take the drill's 100 writes a second with room
const ACTORS = 20;
const RATE = 100;
const FULL: FaultDurations = { brokerDownMs: 10_000, storeCutMs: 60_000, storeHangMs: 20_000 };
const SHORT: FaultDurations = { brokerDownMs: 3000, storeCutMs: 8000, storeHangMs: 8000 };

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
    const storeUrl = new URL(mongoUrl!);
    const brokerUrl = new URL(amqpUrl!);
    const storeProxy = await startTcpProxy(storeUrl.hostname, Number(storeUrl.port));
    const brokerProxy = await startTcpProxy(brokerUrl.hostname, Number(brokerUrl.port || 5672));
    made.closers.push(() => storeProxy.close(), () => brokerProxy.close());
    storeUrl.port = String(storeProxy.port);
    brokerUrl.port = String(brokerProxy.port);

    const receiver = await startHttpsReceiver();
    made.closers.push(() => receiver.close());
    const port = await freePortBlock();
    const dbPrefix = `${process.env.MONGO_DB_PREFIX ?? ''}drill${run}_`;
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: String(port),
      MONGO_URL: storeUrl.toString(),
      MONGO_DB_PREFIX: dbPrefix,
      AMQP_URL: brokerUrl.toString(),
      AMQP_EXCHANGE: `${dbPrefix}events`,
      REDIS_KEY_PREFIX: made.redisPrefix,
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
    const launcher = await startSystem(env, 120_000);
    made.launcher = launcher;
    // From here on, every wait ends when the launcher does: the drill then fails with a report.
    let launcherGone: string | null = null;
    const gone = launcherEnd(launcher).then((how) => {
      if (made.removing) return;
      launcherGone = how;
      console.log(`drill: the launcher ended (${how}); stopping the writes`);
    });
    const untilGone = (work: Promise<unknown>) => Promise.race([work, gone]);
    const gatewayUrl = `http://127.0.0.1:${port}`;
    console.log(`drill: the system on ${gatewayUrl} (PORT..PORT+7), launcher pid ${launcher.pid}`);
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
        body: JSON.stringify({ url: `${receiver.url}/drill/${i}`, events: [...EVENT_TYPES] }),
      });
      if (hook.status !== 201) throw new Error(`webhook create: ${hook.status} ${await hook.text()}`);
    }

    const durations = args.short ? SHORT : FULL;
    const faultLog: FaultLog[] = [];
    let faultsLeft = true;
    const workload = new Workload({
      gatewayUrl,
      teams,
      writes: args.writes,
      rate: RATE,
      actors: ACTORS,
      giveUpMs: durations.storeCutMs + 120_000,
      keepGoing: () => faultsLeft && launcherGone === null,
    });
    const faults = drillFaults({ store: storeProxy, broker: brokerProxy, launcherPid: launcher.pid!, durations, processes: ['gateway', ...SERVICE_NAMES] });
    const started = Date.now();
    console.log(`drill: ${args.writes} writes at ${RATE}/s over ${TEAMS} teams; faults: ${faults.map((f) => f.name).join(', ')}`);
    void gone.then(() => workload.stop());
    await untilGone(Promise.all([workload.run(), runFaults(faults, args.writes, () => workload.done, faultLog, () => launcherGone !== null).finally(() => (faultsLeft = false))]));
    const writeSeconds = (Date.now() - started) / 1000;
    console.log(`drill: ${workload.done} writes in ${writeSeconds.toFixed(0)} s; waiting for quiet`);

    const expected = workload.tally.expected;
    // Quiet: longer than the longest retry delay on the way (60 s: a consumer's transient retries, a webhook's last attempts).
    await untilGone(waitForQuiet(receiver.requests, expected, 150_000, 900_000));
    const events = countEvents(receiver.requests, expected);
    // Derived state (counts kept from events, owed occurrences a repair job stores) settles after the events: asked again for a while.
    const settled = async () => {
      let found = await stateDisagreements(gatewayUrl, teams, workload.stories);
      for (const settleBy = Date.now() + 120_000; found.length > 0 && Date.now() < settleBy; ) {
        await new Promise((r) => setTimeout(r, 10_000));
        found = await stateDisagreements(gatewayUrl, teams, workload.stories);
      }
      return found;
    };
    let problems: string[] = [];
    const inactive: string[] = [];
    const checkState = async () => {
      problems = await settled();
      for (const team of teams) {
        const hooks = await fetch(`${gatewayUrl}/v1/webhooks`, { headers: { authorization: `Bearer ${team.apiKey}` } }).then((r) => r.json() as Promise<{ data?: { id: string; active: boolean }[] }>);
        for (const h of hooks.data ?? []) if (h.active === false) inactive.push(`${team.id} ${h.id}`);
      }
    };
    if (launcherGone === null) await untilGone(checkState());
    if (launcherGone !== null) problems = ['not checked: the launcher ended'];
    const dead = await deadLettered(decodeURIComponent(brokerUrl.pathname.slice(1)) || '/', `${dbPrefix}events.`);
    const failedFaults = faultLog.filter((f) => f.detail);
    const report = {
      'launcher.ended': launcherGone,
      'writes.acknowledged': workload.tally.acknowledged,
      'writes.refused': Object.values(workload.tally.refused).reduce((a, b) => a + b, 0),
      'writes.refused_by_status': workload.tally.refused,
      'writes.refused_sample': workload.tally.refusedSamples,
      'writes.retried_by_status': workload.tally.retried,
      'writes.seconds': writeSeconds,
      'events.expected': expected.size,
      'events.delivered': events.delivered,
      'events.duplicated': events.duplicated,
      'events.lost': events.lost.length,
      'events.lost_sample': events.lost.slice(0, 20),
      'events.dead_lettered': Object.values(dead).reduce((a, b) => a + b, 0),
      'events.dead_lettered_by_queue': dead,
      'webhooks.deactivated': inactive,
      'answers.outside_envelope': workload.tally.outsideEnvelope,
      'answers.outside_sample': workload.tally.outsideSamples,
      'stories.total': workload.stories.length,
      'stories.uncertain': workload.stories.filter((s) => s.uncertain).length,
      'state.agrees': problems.length === 0,
      'state.disagreements': problems.slice(0, 50),
      faults: faultLog,
    };
    console.log(JSON.stringify(report, null, 2));
    if (args.json) writeFileSync(args.json, `${JSON.stringify(report, null, 2)}\n`);
    const ok =
      launcherGone === null &&
      events.lost.length === 0 &&
      Object.keys(dead).length === 0 &&
      workload.tally.outsideEnvelope === 0 &&
      problems.length === 0 &&
      failedFaults.length === 0 &&
      faultLog.length === faults.length;
    console.log(ok ? 'drill: passed' : 'drill: FAILED');
    return ok ? 0 : 1;
  } finally {
    await made.remove();
  }
}

/** Messages left in the system's dead-letter and parking queues (names under `prefix`), by queue: work a consumer never did. */
async function deadLettered(vhost: string, prefix: string): Promise<Record<string, number>> {
  const { stdout } = await promisify(execFile)('rabbitmqctl', ['list_queues', '-p', vhost, '-q', '--no-table-headers', 'name', 'messages'], { encoding: 'utf8' });
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
