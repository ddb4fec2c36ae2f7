// `npm start`: the whole system on this machine. Starts the local document store
// (unless MONGO_URL is set), every service that exists and the gateway, prints the
// gateway URL once it is healthy, and stops everything on Ctrl-C or SIGTERM. A
// process that dies is started again, as compose (`restart: unless-stopped`) and
// Kubernetes (CrashLoopBackOff) would: after 1 s, doubling up to 30 s while it keeps
// dying within a minute of its start, however many times. Each start prints
// `[start] <name> pid <pid>`. Only a process refused by its configuration (exit 78,
// CONFIG_ERROR_EXIT) stops everything: starting it again cannot help.
// `npm start -- --replicas cases=2,webhooks=2` runs more than one process of a
// service (`cases`, `cases-2`, ...) behind the gateway, which balances between them.
// `npm start -- --broker-cluster 3` runs it on a RabbitMQ cluster of 3 nodes of its own
// (scripts/cluster), started first and taken down at the stop.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  startFerretdb,
  isListening,
  localStoreUrl,
  LOCAL_STORE_CONNECTIONS,
  LOCAL_STORE_DATABASE,
  LOCAL_STORE_PORT,
  localStoreDataDir,
  type RunningStore,
} from './local-store.ts';
import { int, readConfig } from '../shared/src/config.ts';
import { SERVICE_NAMES, type ServiceName } from '../shared/src/service/names.ts';
import { firstExtraPort, internalPort, servicePort } from '../shared/src/service/port-layout.ts';
import { parseReplicas } from './replicas.ts';
import { MALLOC_ENV, NODE_FLAGS } from './process-settings.ts';
import { restartDelayMs, STABLE_AFTER_MS } from './restart-backoff.ts';
import { CONFIG_ERROR_EXIT } from '../shared/src/service/process.ts';
import { downCluster, clusterUrl, type Cluster } from './cluster/cluster.ts';
import { parseClusterSize, startPrivateCluster } from './cluster/for-start.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const gatewayPort = Number(process.env.PORT ?? 8080);
const host = process.env.HOST ?? '127.0.0.1';
const children: { name: string; proc: ChildProcess }[] = [];
let store: RunningStore | undefined;
let brokerCluster: Cluster | undefined;
let stopping = false;

function log(line: string): void {
  process.stdout.write(`[start] ${line}\n`);
}

function prefixed(name: string, stream: NodeJS.ReadableStream, out: NodeJS.WritableStream): void {
  let buf = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    buf += chunk;
    const lines = buf.split('\n');
    buf = lines.pop() ?? '';
    for (const l of lines) out.write(`[${name}] ${l}\n`);
  });
}

/** `deaths`: how many times in a row it has died within a minute of its start so far. */
function launch(name: string, script: string, env: NodeJS.ProcessEnv, deaths = 0): void {
  const proc = spawn(process.execPath, [...NODE_FLAGS, script], {
    cwd: root,
    env: { ...MALLOC_ENV, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const startedAt = Date.now();
  log(`${name} pid ${proc.pid}`);
  prefixed(name, proc.stdout, process.stdout);
  prefixed(name, proc.stderr, process.stderr);
  const child = { name, proc };
  children.push(child);
  proc.once('exit', (code, signal) => {
    if (stopping) return;
    children.splice(children.indexOf(child), 1);
    if (code === CONFIG_ERROR_EXIT) {
      log(`${name} refused its configuration (exit ${code}); stopping everything`);
      void stop(CONFIG_ERROR_EXIT);
      return;
    }
    const inARow = Date.now() - startedAt >= STABLE_AFTER_MS ? 0 : deaths;
    const delay = restartDelayMs(inARow);
    log(`${name} exited (${signal ?? code}); starting it again in ${delay / 1000} s`);
    setTimeout(() => {
      if (!stopping) launch(name, script, env, inARow + 1);
    }, delay);
  });
}

async function stop(exitCode: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  await Promise.all(
    children.map(
      ({ proc }) =>
        new Promise<void>((done) => {
          if (proc.exitCode !== null || proc.signalCode !== null) return done();
          proc.once('exit', () => done());
          proc.kill('SIGTERM');
          setTimeout(() => proc.kill('SIGKILL'), 10_000).unref();
        }),
    ),
  );
  await store?.stop();
  if (brokerCluster)
    await downCluster(brokerCluster).catch((e: unknown) => log(`cluster not taken down: ${(e as Error).message}`));
  process.exit(exitCode);
}

/**
 * Webhook secrets are stored encrypted: the key must outlive one run, so the
 * launcher keeps one in .data/ when WEBHOOK_SECRET_KEY is not given.
 */
function localWebhookSecretKey(): string {
  const file = join(root, '.data', 'webhook-secret.key');
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600 });
  }
  return readFileSync(file, 'utf8').trim();
}

async function waitHealthy(url: string, seconds: number): Promise<boolean> {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline && !stopping) {
    try {
      if ((await fetch(url)).status === 200) return true;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

let replicas: ReturnType<typeof parseReplicas> = {};
let clusterSize: number | null = null;
try {
  replicas = parseReplicas(process.argv.slice(2));
  clusterSize = parseClusterSize(process.argv.slice(2));
} catch (e) {
  log((e as Error).message);
  process.exit(1);
}

process.once('SIGINT', () => void stop(0));
process.once('SIGTERM', () => void stop(0));

const env: NodeJS.ProcessEnv = { ...process.env };
env.INTERNAL_TOKEN ??= randomBytes(32).toString('hex');
env.WEBHOOK_SECRET_KEY ??= localWebhookSecretKey();
if (clusterSize !== null) {
  brokerCluster = await startPrivateCluster(clusterSize, 'start');
  env.AMQP_URL = clusterUrl(brokerCluster);
  env.AMQP_QUEUE_TYPE = 'quorum';
  log(`RabbitMQ cluster of ${clusterSize}: ${brokerCluster.nodes.map((n) => `${n.node} on ${n.amqpPort}`).join(', ')}`);
}
/** Each process's MONGO_URL on the local store (its share of the store's connections); null when MONGO_URL is used. */
let localStore: ((who: keyof typeof LOCAL_STORE_CONNECTIONS) => NodeJS.ProcessEnv) | null = null;
// LOCAL_STORE_PORT: a local store on another port, before MONGO_URL (the bench names its own FerretDB both ways, for older launchers).
if (!env.MONGO_URL || env.LOCAL_STORE_PORT) {
  let port: number;
  try {
    ({ port } = readConfig({ port: ['LOCAL_STORE_PORT', int(LOCAL_STORE_PORT, 1, 65535)] }, env));
  } catch (e) {
    log((e as Error).message);
    process.exit(1);
  }
  if (await isListening(port)) {
    log(`using the local document store already running on port ${port}`);
  } else {
    store = await startFerretdb({ dataDir: localStoreDataDir, database: LOCAL_STORE_DATABASE, port });
    log(`local document store (FerretDB) on port ${port}, over ${store.backend}`);
  }
  localStore = (who) => ({ MONGO_URL: localStoreUrl(port, LOCAL_STORE_CONNECTIONS[who]) });
}

// Every process starts from Node's compile cache, warmed first: none of them then loads
// the TypeScript stripper (scripts/warm-compile-cache.ts). NODE_DISABLE_COMPILE_CACHE=1 turns it off.
if (!env.NODE_DISABLE_COMPILE_CACHE) {
  env.NODE_COMPILE_CACHE ??= join(root, 'node_modules', '.cache', 'lpm-compile-cache');
  const warm = spawnSync(process.execPath, [join(root, 'scripts', 'warm-compile-cache.ts'), env.NODE_COMPILE_CACHE], {
    cwd: root,
    env,
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (warm.status !== 0)
    log(
      `compile cache not warmed (${warm.error?.message ?? (warm.stderr.trim() || `exit ${warm.status}`)}); the processes strip their own TypeScript`,
    );
}

// The ports of shared/src/service/port-layout.ts: the services next to the gateway, then its internal listener, then the further replicas.
const services = SERVICE_NAMES;
const gatewayInternalPort = internalPort(gatewayPort);
const deployed: ServiceName[] = [];
let nextExtraPort = firstExtraPort(gatewayPort);
const ports = Object.fromEntries(
  services.map((name) => [
    name,
    [servicePort(gatewayPort, name), ...Array.from({ length: (replicas[name] ?? 1) - 1 }, () => nextExtraPort++)],
  ]),
) as Record<(typeof services)[number], number[]>;
// Every URL is set before any service starts: services ask each other. A service with
// replicas has them all, comma-separated (the gateway and ServiceClient balance over them).
services.forEach(
  (name) => (env[`${name.toUpperCase()}_URL`] = ports[name].map((port) => `http://127.0.0.1:${port}`).join(',')),
);
services.forEach((name) => {
  const script = join(root, 'services', name, 'src', 'server.ts');
  if (!existsSync(script)) return;
  deployed.push(name);
  ports[name].forEach((port, i) =>
    // Services ask the gateway for the users of a team (UserDirectory), on its internal listener.
    launch(i === 0 ? name : `${name}-${i + 1}`, script, {
      ...env,
      ...localStore?.(name),
      PORT: String(port),
      HOST: '127.0.0.1',
      GATEWAY_URL: `http://127.0.0.1:${gatewayInternalPort}`,
      // A local run names itself to the DJEN unless the operator says who they are.
      DJEN_USER_AGENT: env.DJEN_USER_AGENT ?? 'lpm-publications/0.1 (local run; http://localhost)',
    }),
  );
});
env.GATEWAY_SERVICES = deployed.join(',');
launch('gateway', join(root, 'gateway', 'src', 'server.ts'), {
  ...env,
  ...localStore?.('gateway'),
  PORT: String(gatewayPort),
  HOST: host,
  INTERNAL_PORT: String(gatewayInternalPort),
  INTERNAL_HOST: '127.0.0.1',
});

const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${gatewayPort}`;
// The gateway's /health as its internal listener serves it: the same answer, and four polls a second
// are not counted against the public routes' limit per address (PUBLIC_RATE_LIMIT). That listener
// starts after the public one.
const healthUrl = `http://127.0.0.1:${gatewayInternalPort}/health`;
// Not healthy yet is no reason to stop (a store or broker still starting): only Ctrl-C or a configuration error stop.
let healthy = await waitHealthy(healthUrl, 60);
if (!healthy && !stopping) {
  log(`the gateway is not healthy after 60 s (see the logs above); still waiting; Ctrl-C stops everything`);
  healthy = await waitHealthy(healthUrl, Infinity);
}
if (healthy) {
  process.stdout.write(`\nLegal practice API ready: ${url}\n\n`);
  // Where each process serves its metrics (the gateway: its internal listener; a replica: its own port).
  const replicaNames = deployed.flatMap((n) =>
    ports[n].map((port, i) => [i === 0 ? n : `${n}-${i + 1}`, port] as const),
  );
  for (const [name, port] of [['gateway', gatewayInternalPort] as const, ...replicaNames]) {
    process.stdout.write(`metrics ${name} http://127.0.0.1:${port}/metrics\n`);
  }
}
