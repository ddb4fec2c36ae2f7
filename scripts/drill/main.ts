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
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVICE_NAMES } from '../../shared/src/service/names.ts';
import { startHttpsReceiver } from '@lpm/test-kit/https-receiver';
import { freePortBlock, startSystem } from '../system.ts';
import { clusterUrl } from '../cluster/cluster.ts';
import { faultDurations, parseArgs } from './args.ts';
import { clusterFaults } from './cluster-faults.ts';
import { drillFaults } from './faults.ts';
import type { BrokerSide } from './report.ts';
import { DrillResources } from './resources.ts';
import { drill } from './run.ts';
import { brokerCluster, createTeams, startProxies, storeAndBroker, systemEnv, watchLauncher } from './setup.ts';

/** How long a cluster node is down or frozen, and Redis out. */
const NODE_OUTAGE_MS = 20_000;

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  const underJest = Boolean(process.env.LPM_TEST_RUN);
  const run = `${Date.now().toString(36)}${process.pid.toString(36)}`;
  const dir = mkdtempSync(join(tmpdir(), `lpm-drill-${run}-`));
  const made = new DrillResources(dir);
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
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
    if (onCluster)
      Object.assign(env, {
        AMQP_URL: clusterUrl(onCluster.cluster),
        AMQP_QUEUE_TYPE: 'quorum',
        REDIS_URL: onCluster.redisUrl,
      });
    const launcher = await startSystem(env, 120_000);
    made.launcher = launcher;
    // From here on, every wait ends when the launcher does: the drill then fails with a report.
    const watch = watchLauncher(launcher, made);
    const gatewayUrl = `http://127.0.0.1:${port}`;
    console.log(`drill: the system on ${gatewayUrl} (PORT..PORT+7), launcher pid ${launcher.pid}`);
    const teams = await createTeams(gatewayUrl, env, receiver.url);
    const nodeFaults =
      onCluster &&
      clusterFaults({ cluster: onCluster.cluster, vhost: '/', redis: onCluster.redis, outageMs: NODE_OUTAGE_MS });
    const faults =
      nodeFaults?.faults ??
      drillFaults({
        store: storeProxy,
        broker: brokerProxy,
        launcherPid: launcher.pid!,
        durations: faultDurations(args),
        processes: ['gateway', ...SERVICE_NAMES],
      });
    const broker: BrokerSide = onCluster
      ? {
          vhost: '/',
          node: onCluster.cluster.nodes[0].node,
          nodes: args.cluster,
          failovers: () => nodeFaults!.failovers(),
        }
      : { vhost: decodeURIComponent(brokerUrl.pathname.slice(1)) || '/', nodes: 1, failovers: () => 0 };
    return await drill({ args, watch, gatewayUrl, teams, receiver, faults, broker, storeUrl: urls.mongoUrl, dbPrefix });
  } finally {
    await made.remove();
  }
}

// Exits at once when done: after the launcher ended, waits it gave up on may still be pending.
try {
  process.exit(await main());
} catch (e) {
  console.error(`drill: ${(e as Error).stack ?? String(e)}`);
  process.exit(2);
}
