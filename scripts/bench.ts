// `npm run bench`: throughput and latency of GET /v1/clients/{id} and POST /v1/clients,
// through the gateway and straight to the clients service, measured in one run on
// a private store, vhost and key prefix. Prints figures; asserts nothing.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { Broker } from '../shared/src/broker.ts';
import { OutboxRelay, outboxOnInsert } from '../shared/src/outbox.ts';
import { newEvent } from '../shared/src/events.ts';
import { MongoClient } from 'mongodb';
import { connect } from 'amqplib';
import { dropPostgresDatabase, startFerretdb } from '../shared/src/local-store.ts';
import { defaultTeamSettings, identityHeaders, type Identity } from '../shared/src/identity.ts';
import { Accounts } from '../gateway/src/domain/accounts.ts';
import { openGatewayStore } from '../gateway/src/store.ts';
import { addVhost, deleteVhost, ensureRabbitmq, ensureRedis } from './local-servers.ts';
import { freePortBlock, startSystem } from './system.ts';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const TEAMS = 40; // enterprise allows 1,000 requests a minute per team: spread the load so no 429 skews the figures

interface BenchTeam {
  key: string;
  identity: Identity;
  clientId: string;
}

/**
 * Counts the client.created events that reach the broker, so the bench can wait
 * for the relay to publish one run's backlog before the next run (without
 * scanning the store, which would slow the relay it is waiting for).
 */
async function createdEventCounter(amqpUrl: string, exchange: string) {
  const conn = await connect(amqpUrl);
  const ch = await conn.createChannel();
  await ch.assertExchange(exchange, 'topic', { durable: true });
  const { queue } = await ch.assertQueue('', { exclusive: true });
  await ch.bindQueue(queue, exchange, 'client.created');
  const published = async () => (await ch.checkQueue(queue)).messageCount;
  return {
    /** Waits until `expected` events were published; reports how fast the backlog went. */
    async drained(expected: number): Promise<void> {
      const started = Date.now();
      const backlog = expected - (await published());
      if (backlog <= 0) return;
      while ((await published()) < expected) await new Promise((r) => setTimeout(r, 250));
      const seconds = (Date.now() - started) / 1000;
      console.log(`  outbox backlog of ${backlog} events relayed in ${seconds.toFixed(1)} s (${(backlog / seconds).toFixed(0)} events/s)`);
    },
    close: () => conn.close(),
  };
}

/** One relay draining documents that each carry one event, with nothing else running. */
async function relayThroughput(mongoUrl: string, amqpUrl: string, documents: number): Promise<number> {
  const client = await MongoClient.connect(mongoUrl);
  const logger = pino({ level: 'silent' });
  const broker = await Broker.connect({ url: amqpUrl, exchange: 'bench.relay', logger });
  try {
    const db = client.db('bench_relay');
    const object = { id: 'cli_x', name: 'x'.repeat(300) };
    const docs = Array.from({ length: documents }, (_, i) => ({ _id: `cli_${i}`, ...object, ...outboxOnInsert([newEvent('client.created', 'team_bench', object)]) }));
    await db.collection<{ _id: string }>('clients').insertMany(docs);
    const relay = new OutboxRelay({ db, collections: ['clients'], publisher: broker, logger, scanIntervalMs: 3_600_000 });
    for (const d of docs) relay.kick('clients', d._id);
    const started = Date.now();
    await relay.runOnce();
    return documents / ((Date.now() - started) / 1000);
  } finally {
    await broker.close();
    await client.close();
  }
}

interface Figures {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  created: number;
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

const run = `${Date.now().toString(36)}${process.pid.toString(36)}`;
const dir = mkdtempSync(join(tmpdir(), `lpm-bench-${run}-`));
const vhost = `lpm-bench-${run}`;
const redisPrefix = `lpm-bench-${run}:`;
const token = randomBytes(32).toString('hex');
await Promise.all([ensureRabbitmq(), ensureRedis()]);
const pgDatabase = `lpm_bench_${run}`;
const store = await startFerretdb({ dataDir: join(dir, 'ferretdb'), database: pgDatabase });
addVhost(vhost);
const port = await freePortBlock();
const env: NodeJS.ProcessEnv = {
  ...process.env,
  PORT: String(port),
  MONGO_URL: store.url,
  MONGO_DB_PREFIX: 'bench_',
  AMQP_URL: `amqp://guest:guest@127.0.0.1:5672/${encodeURIComponent(vhost)}`,
  REDIS_KEY_PREFIX: redisPrefix,
  INTERNAL_TOKEN: token,
  LOG_LEVEL: 'warn',
};
let system: ChildProcess | undefined;
let cleaning: Promise<void> | undefined;
const cleanUp = () =>
  (cleaning ??= (async () => {
    if (system && system.exitCode === null) {
      const exited = new Promise((done) => system!.once('exit', done));
      system.kill('SIGTERM');
      await exited;
    }
    await store.stop();
    await dropPostgresDatabase(pgDatabase);
    deleteVhost(vhost);
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    const keys = await redis.keys(`${redisPrefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    rmSync(dir, { recursive: true, force: true });
  })());
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void cleanUp().finally(() => process.exit(130)));
}
try {
  system = await startSystem(env);
  const events = await createdEventCounter(env.AMQP_URL!, 'lpm.events');
  let created = 0;
  const orm = await openGatewayStore({ url: store.url, dbPrefix: 'bench_' });
  const accounts = new Accounts({ orm });
  const gatewayUrl = `http://127.0.0.1:${port}`;
  const serviceUrl = `http://127.0.0.1:${port + 2}`;
  const teams: BenchTeam[] = [];
  for (let n = 0; n < TEAMS; n++) {
    const team = await accounts.createTeam({ name: `Bench ${n}`, plan: 'enterprise', ownerName: 'Bench', ownerEmail: `bench${n}@example.com` });
    const identity: Identity = { teamId: team.team.id, userId: team.user.id, scopes: ['read', 'write', 'admin'], settings: defaultTeamSettings() };
    const res = await fetch(`${serviceUrl}/v1/clients`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...identityHeaders(identity, token) },
      body: JSON.stringify({ type: 'PF', name: `Cliente ${n}` }),
    });
    teams.push({ key: team.apiKey, identity, clientId: ((await res.json()) as { data: { id: string } }).data.id });
    created++;
  }
  await orm.close();

  console.log(`\nbench: ${DURATION_S} s per run, ${CONNECTIONS} connections, ${TEAMS} enterprise teams, FerretDB over ${store.backend}\n`);
  const figures: Figures[] = [];
  for (const [label, method] of [['GET /v1/clients/{id}', 'GET'], ['POST /v1/clients', 'POST']] as const) {
    await events.drained(created);
    const direct = await measure(`${label} direct`, serviceUrl, method, teams, false, token);
    created += direct.created;
    await events.drained(created);
    const gated = await measure(`${label} gateway`, gatewayUrl, method, teams, true, token);
    created += gated.created;
    figures.push(direct, gated);
    console.log(
      `${label}: gateway/direct throughput ${(gated.rps / direct.rps).toFixed(2)}, ` +
        `p50 ${(gated.p50 / Math.max(direct.p50, 0.001)).toFixed(2)}x, p99 ${(gated.p99 / Math.max(direct.p99, 0.001)).toFixed(2)}x`,
    );
  }
  await events.drained(created);
  await events.close();
  const relayRate = await relayThroughput(store.url, env.AMQP_URL!, 2000);
  console.log(`outbox relay alone: 2,000 documents with one event each, ${relayRate.toFixed(0)} events/s`);
  console.log('\n| run | req/s | p50 ms | p99 ms | non-2xx or errors |');
  console.log('|---|---:|---:|---:|---:|');
  for (const f of figures) console.log(`| ${f.name} | ${f.rps.toFixed(0)} | ${f.p50} | ${f.p99} | ${f.errors} |`);
} finally {
  await cleanUp();
}
