// What the drill sets up before the writes: the store and the broker (the run's under
// Jest, else its own), the TCP proxies to them the faults cut and hang, its RabbitMQ
// cluster with `--cluster`, the system's environment, a watch on the launcher, and the
// teams with their webhooks.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { EVENT_TYPES } from '../../shared/src/events.ts';
import { startFerretdb } from '../local-store.ts';
import { startTcpProxy, type TcpProxy } from '@lpm/test-kit/tcp-proxy';
import { createTestTls } from '@lpm/test-kit/test-ca';
import { addVhost, ensureRabbitmq, ensureRedis } from '../local-servers.ts';
import type { Launcher } from '../system.ts';
import { launcherEnd } from './launcher.ts';
import type { DrillResources } from './resources.ts';
import type { Cluster } from '../cluster/cluster.ts';
import { startPrivateCluster } from '../cluster/for-start.ts';
import type { DrillTeam } from './workload.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const TEAMS = 10; // enterprise teams take 1,000 requests a minute each: 10 take the drill's 100 writes a second with room

/** Under Jest, the run's store and broker; alone, a test CA, a FerretDB and a vhost of the drill's own. */
export async function storeAndBroker(
  made: DrillResources,
  dir: string,
  run: string,
  underJest: boolean,
): Promise<{ mongoUrl: string; amqpUrl: string }> {
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
export async function brokerCluster(
  made: DrillResources,
  size: number,
): Promise<{ cluster: Cluster; redis: TcpProxy; redisUrl: string }> {
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
export async function startProxies(made: DrillResources, urls: { mongoUrl: string; amqpUrl: string }) {
  const storeUrl = new URL(urls.mongoUrl);
  const brokerUrl = new URL(urls.amqpUrl);
  const storeProxy = await startTcpProxy(storeUrl.hostname, Number(storeUrl.port));
  const brokerProxy = await startTcpProxy(brokerUrl.hostname, Number(brokerUrl.port || 5672));
  made.closers.push(
    () => storeProxy.close(),
    () => brokerProxy.close(),
  );
  storeUrl.port = String(storeProxy.port);
  brokerUrl.port = String(brokerProxy.port);
  return { storeProxy, brokerProxy, storeUrl, brokerUrl };
}

export function systemEnv(s: {
  port: number;
  storeUrl: URL;
  brokerUrl: URL;
  dbPrefix: string;
  redisPrefix: string;
}): NodeJS.ProcessEnv {
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
export interface LauncherWatch {
  ended: string | null;
  gone: Promise<void>;
  /** `work`, or the launcher's end if that comes first. */
  untilGone(work: Promise<unknown>): Promise<unknown>;
}

export function watchLauncher(launcher: Launcher, made: DrillResources): LauncherWatch {
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
export async function createTeams(
  gatewayUrl: string,
  env: NodeJS.ProcessEnv,
  receiverUrl: string,
): Promise<DrillTeam[]> {
  const teams: DrillTeam[] = [];
  for (let i = 0; i < TEAMS; i++) {
    // Asynchronously: the proxies run in this process, which a synchronous spawn would block.
    const cli = await promisify(execFile)(
      process.execPath,
      [
        'gateway/src/cli/main.ts',
        'team',
        'create',
        '--name',
        `Drill ${i}`,
        '--plan',
        'enterprise',
        '--owner-name',
        `Dona ${i}`,
        '--owner-email',
        `dona${i}@drill.example`,
        '--json',
      ],
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
