// `npm run bench`: throughput and latency of GET /v1/clients/{id} and POST /v1/clients,
// through the gateway and straight to the clients service; then webhook deliveries of
// client.created to local HTTPS receivers (answering at once, after 50 ms, and at once
// beside a receiver that never answers): deliveries/s and the time from the write's
// response to the receiver; then GET /v1/cases on a team with 100,000 cases (no
// filter, a filter, a search) and how long a client's new name takes to show on its
// case. Measured in one run on a private store, vhost, key prefix and test CA.
// Prints figures; asserts nothing.
import { execFile, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { Broker } from '../shared/src/messaging/broker.ts';
import { OutboxRelay } from '../shared/src/outbox/relay.ts';
import { outboxOnInsert } from '../shared/src/outbox/fields.ts';
import { newEvent } from '../shared/src/events.ts';
import { newId } from '../shared/src/ids.ts';
import { MongoClient } from 'mongodb';
import { connect } from 'amqplib';
import { dropPostgresDatabase, startFerretdb } from '../shared/src/local-store.ts';
import { DEFAULT_CASE_PHASES, defaultTeamSettings, identityHeaders, type Identity } from '../shared/src/identity.ts';
import type { CasePriority, CaseRecord, CaseStatus } from '../services/cases/src/data/case-entity.ts';
import { derivedFields } from '../services/cases/src/domain/case-shape.ts';
import { Accounts } from '../gateway/src/domain/accounts.ts';
import { openGatewayStore } from '../gateway/src/store.ts';
import { startHttpsReceiver, type HttpsReceiver, type ReceivedRequest, type ReceiverHandler } from '../shared/test/support/https-receiver.ts';
import { createTestTls } from '../test/support/test-ca.ts';
import { addVhost, deleteVhost, ensureRabbitmq, ensureRedis } from './local-servers.ts';
import { freePortBlock, startSystem } from './system.ts';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const TEAMS = 40; // enterprise allows 1,000 requests a minute per team: spread the load so no 429 skews the figures
const CASES = Number(process.env.BENCH_CASES ?? 100_000);
// Few connections, so the case list figures show a request's latency rather than queueing.
const CASE_CONNECTIONS = Number(process.env.BENCH_CASE_CONNECTIONS ?? 4);
const RENAMES = Number(process.env.BENCH_RENAMES ?? 50);
/** A search term present in some seeded titles (folded as the service folds it: "Guimarães" matches). */
const SEARCH = 'guimaraes';

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
    /** Date.now() once `expected` events were published (polled every 100 ms), or null at `deadline`. */
    async publishedBy(expected: number, deadline: number): Promise<number | null> {
      while ((await published()) < expected) {
        if (Date.now() > deadline) return null;
        await new Promise((r) => setTimeout(r, 100));
      }
      return Date.now();
    },
    /** client.created events published so far (since the counter was made). */
    published,
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

// ---- GET /v1/cases on a team with many cases ----

const TITLES: ((n: number, who: string) => string)[] = [
  (n) => `Ação de cobrança ${n}`,
  (_, who) => `Reclamação trabalhista - ${who}`,
  (n) => `Execução fiscal ${n}`,
  (_, who) => `Divórcio consensual ${who}`,
  (_, who) => `Inventário de ${who}`,
  (n) => `Mandado de segurança ${n}`,
  (_, who) => `Revisão contratual - ${who}`,
  (_, who) => `Indenização por danos morais - ${who}`,
];
const GIVEN = ['Ana', 'João', 'Maria', 'José', 'Francisca', 'Antônio', 'Luíza', 'Paulo', 'Carla', 'Márcio'];
const FAMILY = ['Silva', 'Santos', 'Oliveira', 'Souza', 'Lima', 'Pereira', 'Ferreira', 'Costa', 'Rodrigues', 'Almeida', 'Nascimento', 'Araújo', 'Melo', 'Barbosa', 'Ribeiro', 'Carvalho', 'Gomes', 'Martins', 'Rocha', 'Guimarães'];
const AREAS = ['Cível', 'Trabalhista', 'Tributário', 'Família', 'Empresarial', null];
const PRIORITIES: CasePriority[] = ['alta', 'media', 'baixa'];
const DAY_MS = 86_400_000;

/** Case number i of a team, built the way Cases.create stores a case (timeline and outbox left empty). */
function seededCase(teamId: string, i: number, clientIds: string[], now: number): CaseRecord {
  const who = `${GIVEN[i % GIVEN.length]} ${FAMILY[Math.floor(i / GIVEN.length) % FAMILY.length]}`;
  const title = TITLES[i % TITLES.length](10_000 + i, who);
  const created = new Date(now - Math.floor(((i * 7919) % CASES) / CASES * 365 * DAY_MS) - (i % 1000) * 1000);
  const status: CaseStatus = i % 10 === 9 ? 'arquivado' : 'ativo';
  const updated = new Date(Math.min(now, created.getTime() + (i % 30) * DAY_MS));
  const slaDate = i % 5 < 2 ? null : new Date(created.getTime() + (30 + (i % 120)) * DAY_MS).toISOString().slice(0, 10);
  const record = {
    _id: newId('case'),
    team_id: teamId,
    title,
    // CNJ-like, unique per team (the unique index on team_id + number_key); some cases have none.
    number: i % 10 === 3 ? null : `${String(i).padStart(7, '0')}-${String(i % 97).padStart(2, '0')}.${created.getUTCFullYear()}.8.26.0100`,
    area: AREAS[i % AREAS.length],
    subject: i % 3 === 0 ? null : `Assunto ${i % 50}`,
    phase: DEFAULT_CASE_PHASES[i % DEFAULT_CASE_PHASES.length],
    priority: PRIORITIES[i % PRIORITIES.length],
    status,
    client_id: i % 4 === 0 ? clientIds[i % clientIds.length] : null,
    responsible_id: null,
    sla_date: slaDate,
    description: null,
    labels: [],
    metadata: {},
    activities_count: 0,
    documents_count: 0,
    archived_at: status === 'arquivado' ? updated : null,
    created_at: created,
    updated_at: updated,
    version: 1,
  } as unknown as CaseRecord;
  Object.assign(record, derivedFields(record), { sla_warning_at: null, sla_overdue_at: null, timeline: [] });
  return record;
}

/** Inserts CASES cases of one team straight into the cases service's collection; returns seconds taken. */
async function seedCases(mongoUrl: string, teamId: string, clientIds: string[]): Promise<number> {
  const client = await MongoClient.connect(mongoUrl);
  try {
    const cases = client.db('bench_cases').collection<CaseRecord>('cases');
    const now = Date.now();
    const started = Date.now();
    for (let from = 0; from < CASES; from += 1000) {
      const batch = Array.from({ length: Math.min(1000, CASES - from) }, (_, k) => seededCase(teamId, from + k, clientIds, now));
      await cases.insertMany(batch, { ordered: false });
    }
    return (Date.now() - started) / 1000;
  } finally {
    await client.close();
  }
}

/** The cases collection's indexes (created by the service at start) and how the store runs the list queries. */
async function describeCasesStore(mongoUrl: string, queries: { label: string; filter: Record<string, unknown> }[]) {
  const client = await MongoClient.connect(mongoUrl);
  try {
    const cases = client.db('bench_cases').collection('cases');
    console.log('indexes of bench_cases.cases:');
    for (const ix of await cases.listIndexes().toArray()) console.log(`  ${ix.name} ${JSON.stringify(ix.key)}${ix.unique ? ' unique' : ''}`);
    for (const q of queries) {
      const plan = (await cases.find(q.filter, { sort: { created_at: -1, _id: -1 }, limit: 20, projection: { outbox: 0, timeline: 0 } }).explain()) as Record<string, unknown>;
      const flags = ['filterPushdown', 'sortPushdown', 'limitPushdown'].filter((k) => k in plan).map((k) => `${k}=${String(plan[k])}`);
      const winning = (plan.queryPlanner as { winningPlan?: unknown } | undefined)?.winningPlan;
      console.log(`  explain ${q.label}: ${flags.length ? flags.join(', ') : JSON.stringify(winning ?? plan).slice(0, 200)}`);
    }
    // The periodic queries of the cases service that read this collection besides the lists.
    const now = new Date();
    const background: [string, Record<string, unknown>, Record<string, 1>][] = [
      ['outbox relay scan (every 30 s)', { outbox_pending: true }, {}],
      ['SLA warning sweep (every minute)', { sla_warning_at: { $lte: now } }, { sla_warning_at: 1 }],
      ['SLA overdue sweep (every minute)', { sla_overdue_at: { $lte: now } }, { sla_overdue_at: 1 }],
    ];
    for (const [label, filter, sort] of background) {
      const started = Date.now();
      await cases.find(filter, { projection: { _id: 1 }, sort, limit: 100 }).toArray();
      console.log(`  ${label}: ${Date.now() - started} ms`);
    }
  } finally {
    await client.close();
  }
}

interface ListRun {
  label: string;
  path: string;
}

/**
 * One list query measured with autocannon, after one request alone (a warm-up, printed).
 * Quick requests: CASE_CONNECTIONS connections for the duration. Slow ones (as on FerretDB
 * with 100,000 cases, seconds each): one connection and a fixed number of requests,
 * about the duration's worth but at least two, so the figures are a request's latency and
 * not queueing on the store, and no request is left running into the next run. A warm-up
 * the server refuses or times out is reported as it is, without a run.
 */
async function measureList(name: string, baseUrl: string, run: ListRun, headers: Record<string, string>): Promise<Figures> {
  const probeStarted = Date.now();
  const probe = await fetch(`${baseUrl}${run.path}`, { headers });
  const body = (await probe.json()) as { pagination?: { total: number }; data?: unknown[]; error?: { message: string } };
  const probeMs = Date.now() - probeStarted;
  console.log(
    `  ${name}: one request alone ${probeMs} ms, status ${probe.status}, ` +
      (probe.ok ? `${body.data?.length ?? 0} items of ${body.pagination?.total ?? '?'}` : `"${body.error?.message ?? ''}"`),
  );
  if (!probe.ok) return { name: `${name} (1 request)`, rps: 1000 / probeMs, p50: probeMs, p99: probeMs, errors: 1, created: 0 };
  // Slow: fewer than about four requests per connection in the duration, were they queued on the store.
  const slow = probeMs * CASE_CONNECTIONS * 4 > DURATION_S * 1000;
  const connections = slow ? 1 : CASE_CONNECTIONS;
  const amount = slow ? Math.max(2, Math.round((DURATION_S * 1000) / probeMs)) : undefined;
  const result = await autocannon({
    url: `${baseUrl}${run.path}`,
    connections,
    ...(amount ? { amount } : { duration: DURATION_S }),
    timeout: Math.max(30, Math.ceil((probeMs * 3) / 1000)),
    headers,
  });
  const statuses = (result as unknown as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {};
  const refused = statuses['429']?.count ?? 0;
  const label = amount ? `${name} (1 connection, ${amount} requests)` : name;
  console.log(
    `  ${label}: ${result.requests.total} responses in ${result.duration} s` +
      `${Object.keys(statuses).length ? `, statuses ${Object.entries(statuses).map(([c, v]) => `${c}x${v.count}`).join(' ')}` : ''}` +
      `${refused ? ` (${refused} rate limited)` : ''}${result.errors ? `, ${result.errors} errors (${result.timeouts} timeouts)` : ''}`,
  );
  return {
    name: label,
    rps: result.requests.total / Math.max(result.duration, 0.001),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.non2xx + result.errors,
    created: 0,
  };
}

// ---- A client's new name shown on its case ----

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];

const RENAME_PATIENCE_MS = 60_000;

/**
 * Links a new client to a new case, renames the client RENAMES times, and each time
 * measures ms from the PUT's response to the first GET of the case showing the new name
 * (a GET every 10 ms). Prints p50, p99 and max.
 */
async function renameLatency(label: string, clientsUrl: string, casesUrl: string, headers: Record<string, string>): Promise<void> {
  const json = { 'content-type': 'application/json', ...headers };
  const post = async (url: string, body: unknown) => {
    const res = await fetch(url, { method: 'POST', headers: json, body: JSON.stringify(body) });
    if (res.status !== 201) throw new Error(`POST ${url} answered ${res.status}: ${await res.text()}`);
    return ((await res.json()) as { data: { id: string } }).data.id;
  };
  const clientId = await post(`${clientsUrl}/v1/clients`, { type: 'PF', name: 'Renomeada 0' });
  const caseId = await post(`${casesUrl}/v1/cases`, { title: 'Ação de cobrança renomeada', client_id: clientId });
  const latencies: number[] = [];
  let unseen = 0;
  for (let n = 1; n <= RENAMES; n++) {
    const name = `Renomeada ${n}`;
    const put = await fetch(`${clientsUrl}/v1/clients/${clientId}`, { method: 'PUT', headers: json, body: JSON.stringify({ name }) });
    if (put.status !== 200) throw new Error(`PUT client answered ${put.status}: ${await put.text()}`);
    await put.arrayBuffer();
    const answered = performance.now();
    for (;;) {
      const res = await fetch(`${casesUrl}/v1/cases/${caseId}`, { headers });
      const shown = ((await res.json()) as { data?: { client?: { name: string | null } | null } }).data?.client?.name;
      if (shown === name) {
        latencies.push(performance.now() - answered);
        break;
      }
      if (performance.now() - answered > RENAME_PATIENCE_MS) {
        unseen++;
        break;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  latencies.sort((x, y) => x - y);
  const ms = (q: number) => (latencies.length ? quantile(latencies, q).toFixed(0) : '-');
  console.log(
    `client rename -> visible on its case, ${label} (${RENAMES} sequential renames, direct, GET every 10 ms): ` +
      `p50 ${ms(0.5)} ms, p99 ${ms(0.99)} ms, max ${ms(1)} ms` +
      `${latencies.filter((l) => l > 1000).length ? `, ${latencies.filter((l) => l > 1000).length} over 1 s` : ''}` +
      `${unseen ? `, ${unseen} not seen within ${RENAME_PATIENCE_MS / 1000} s` : ''}`,
  );
}

// ---- Webhook deliveries ----

const WEBHOOK_EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 500);
const WEBHOOK_CONCURRENCY = Number(process.env.BENCH_WEBHOOK_CONCURRENCY ?? 16);
/** Fresh enterprise teams per scenario, the writes spread over them (1,000 requests a minute each). */
const WEBHOOK_TEAMS = Number(process.env.BENCH_WEBHOOK_TEAMS ?? 5);
const WEBHOOK_PATIENCE_MS = 120_000;
/** The queues of the webhooks service that must be empty (ready and unacked) between scenarios. */
const WEBHOOK_QUEUES = (exchange: string) => [`${exchange}.webhooks.fan-out`, `${exchange}.webhooks.attempts`];

interface WebhookFigures {
  name: string;
  written: number;
  writeErrors: number;
  writeSeconds: number;
  arrived: number;
  duplicates: number;
  perSecond: number;
  p50: number;
  p99: number;
  max: number;
}

const execFileAsync = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const received = { status: 200, body: '{"received":true}', headers: { 'content-type': 'application/json' } };
const bodyOf = (r: ReceivedRequest): { type?: string; data?: { object?: { id?: string } } } => {
  try {
    return JSON.parse(r.body);
  } catch {
    return {};
  }
};
/** Answers 200 after `delayMs`. */
const answerAfter = (delayMs: number): ReceiverHandler => async () => {
  if (delayMs > 0) await sleep(delayMs);
  return received;
};
/** Answers the signed ping a new webhook must pass, and never any delivery. */
const neverAnswer: ReceiverHandler = (r) => (bodyOf(r).type === 'ping' ? received : undefined);

/** Ready and unacknowledged messages of the vhost's queues, by name (rabbitmqctl: checkQueue cannot see unacked ones). */
async function queueDepths(vhost: string): Promise<Map<string, { ready: number; unacked: number }>> {
  // Not execFileSync: the receivers answer in this process.
  const { stdout: out } = await execFileAsync('rabbitmqctl', ['list_queues', '-p', vhost, '-q', '--formatter', 'json', 'name', 'messages_ready', 'messages_unacknowledged'], { encoding: 'utf8' });
  const rows = JSON.parse(out) as { name: string; messages_ready: number; messages_unacknowledged: number }[];
  return new Map(rows.map((r) => [r.name, { ready: r.messages_ready, unacked: r.messages_unacknowledged }]));
}

/**
 * Waits until the webhooks service has nothing left to do now: its fan-out and
 * attempts queues, and the 1 s queue of jobs deferred for a busy webhook, are empty
 * with nothing unacknowledged, twice in a row. Retries due in minutes (the 5 min
 * tier of a timed-out attempt) are left in their delay queues.
 */
async function webhooksSettled(vhost: string, exchange: string, patienceMs = WEBHOOK_PATIENCE_MS): Promise<void> {
  const names = [...WEBHOOK_QUEUES(exchange), `${exchange}.webhooks.attempts.delay.1000`];
  const started = Date.now();
  let quiet = 0;
  let last = '';
  let wasBusy = false;
  while (quiet < 2) {
    const depths = await queueDepths(vhost);
    const busy = names.filter((n) => (depths.get(n)?.ready ?? 0) + (depths.get(n)?.unacked ?? 0) > 0);
    last = busy.map((n) => `${n} ${depths.get(n)!.ready}+${depths.get(n)!.unacked}`).join(', ');
    quiet = busy.length ? 0 : quiet + 1;
    wasBusy ||= busy.length > 0;
    if (Date.now() - started > patienceMs) {
      console.log(`  webhooks queues still busy after ${patienceMs / 1000} s (ready+unacked): ${last}`);
      return;
    }
    await sleep(500);
  }
  if (wasBusy) console.log(`  waited ${((Date.now() - started) / 1000).toFixed(1)} s for the webhooks queues to drain`);
}

interface WebhookScenario {
  name: string;
  /** The healthy receiver's answer delay. */
  delayMs: number;
  /** One more webhook per team, to a receiver that never answers. */
  withTimeout: boolean;
}

interface WebhookBench {
  gatewayUrl: string;
  storeUrl: string;
  vhost: string;
  exchange: string;
  events: Awaited<ReturnType<typeof createdEventCounter>>;
  /** client.created events written so far (for the relay counter). */
  created: number;
  receivers: HttpsReceiver[];
}

/**
 * One scenario: WEBHOOK_TEAMS fresh enterprise teams, each with a webhook on
 * client.created to the scenario's healthy receiver (and, withTimeout, one to a
 * receiver that never answers); WEBHOOK_EVENTS POST /v1/clients through the gateway,
 * WEBHOOK_CONCURRENCY at a time, round robin over the teams. Latency: from the
 * instant a POST's response was read to the instant the receiver had the body of
 * that client's client.created delivery (both Date.now() in this process).
 */
async function webhookScenario(s: WebhookScenario, b: WebhookBench, index: number): Promise<WebhookFigures> {
  const healthy = await startHttpsReceiver(answerAfter(s.delayMs));
  b.receivers.push(healthy);
  const hanging = s.withTimeout ? await startHttpsReceiver(neverAnswer) : undefined;
  if (hanging) b.receivers.push(hanging);

  const orm = await openGatewayStore({ url: b.storeUrl, dbPrefix: 'bench_' });
  const accounts = new Accounts({ orm });
  const keys: string[] = [];
  for (let n = 0; n < WEBHOOK_TEAMS; n++) {
    const t = await accounts.createTeam({ name: `Bench webhooks ${index}.${n}`, plan: 'enterprise', ownerName: 'Bench', ownerEmail: `bench-wh${index}-${n}@example.com` });
    keys.push(t.apiKey);
  }
  await orm.close();
  const hookIds = { healthy: [] as string[], hanging: [] as string[] };
  for (const [n, key] of keys.entries()) {
    for (const [kind, receiver] of [['healthy', healthy], ['hanging', hanging]] as const) {
      if (!receiver) continue;
      const res = await fetch(`${b.gatewayUrl}/v1/webhooks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ url: `${receiver.url}/team-${n}`, events: ['client.created'] }),
      });
      if (res.status !== 201) throw new Error(`POST /v1/webhooks answered ${res.status}: ${await res.text()}`);
      hookIds[kind].push(((await res.json()) as { data: { id: string } }).data.id);
    }
  }

  // Arrivals of client.created at the healthy receiver, by client id (parsed as they come).
  const arrivals = new Map<string, number[]>();
  let parsed = 0;
  const collect = () => {
    for (; parsed < healthy.requests.length; parsed++) {
      const r = healthy.requests[parsed];
      const body = bodyOf(r);
      const id = body.data?.object?.id;
      if (body.type !== 'client.created' || !id) continue;
      const list = arrivals.get(id) ?? [];
      list.push(r.at);
      arrivals.set(id, list);
    }
  };

  // How many of the scenario's events the relay had published, sampled every 250 ms until all are.
  const before = b.created;
  const publishedAt: number[] = [];
  let sampling = true;
  const sampler = (async () => {
    let seen = 0;
    while (sampling) {
      const now = (await b.events.published()) - before;
      for (; seen < now; seen++) publishedAt.push(Date.now());
      await sleep(250);
    }
  })();
  const answered = new Map<string, number>();
  let next = 0;
  let writeErrors = 0;
  const writesStarted = Date.now();
  await Promise.all(
    Array.from({ length: WEBHOOK_CONCURRENCY }, async () => {
      for (let i = next++; i < WEBHOOK_EVENTS; i = next++) {
        const res = await fetch(`${b.gatewayUrl}/v1/clients`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${keys[i % keys.length]}` },
          body: JSON.stringify({ type: 'PJ', name: `Webhook bench ${index}.${i}`, segment: 'regular' }),
        });
        const body = (await res.json()) as { data?: { id: string } };
        if (res.status === 201 && body.data) answered.set(body.data.id, Date.now());
        else writeErrors++;
      }
    }),
  );
  const writeSeconds = (Date.now() - writesStarted) / 1000;
  b.created += answered.size;
  const deadline = Date.now() + WEBHOOK_PATIENCE_MS;
  // When the clients service's relay had published the scenario's last event, beside the deliveries.
  const relayed = b.events.publishedBy(b.created, deadline);
  for (;;) {
    collect();
    if ([...answered.keys()].every((id) => arrivals.has(id)) || Date.now() > deadline) break;
    await sleep(100);
  }
  const lastPublished = await relayed;
  sampling = false;
  await sampler;
  await webhooksSettled(b.vhost, b.exchange);
  collect();

  const firstAnswer = Math.min(...answered.values());
  const latencies: number[] = [];
  let arrived = 0;
  let duplicates = 0;
  let lastArrival = firstAnswer;
  for (const [id, at] of answered) {
    const times = arrivals.get(id);
    if (!times) continue;
    arrived++;
    duplicates += times.length - 1;
    latencies.push(times[0] - at);
    lastArrival = Math.max(lastArrival, times[0]);
  }
  latencies.sort((x, y) => x - y);
  const figures: WebhookFigures = {
    name: s.name,
    written: answered.size,
    writeErrors,
    writeSeconds,
    arrived,
    duplicates,
    perSecond: arrived / Math.max((lastArrival - firstAnswer) / 1000, 0.001),
    p50: latencies.length ? quantile(latencies, 0.5) : NaN,
    p99: latencies.length ? quantile(latencies, 0.99) : NaN,
    max: latencies.length ? latencies[latencies.length - 1] : NaN,
  };
  const since = (t: number) => `+${((t - firstAnswer) / 1000).toFixed(1)} s`;
  console.log(
    `  ${s.name}: ${answered.size} clients written in ${writeSeconds.toFixed(1)} s (${(answered.size / writeSeconds).toFixed(0)}/s)` +
      `${writeErrors ? `, ${writeErrors} writes refused or failed` : ''}; ` +
      `last event published by the relay ${lastPublished ? since(lastPublished) : 'not seen'}, last delivery arrived ${since(lastArrival)} ` +
      `(times from the first write's response)`,
  );
  console.log(
    `  ${s.name}: ${arrived} of ${answered.size} delivered${arrived < answered.size ? ` (${answered.size - arrived} missing after ${WEBHOOK_PATIENCE_MS / 1000} s)` : ''}, ` +
      `${duplicates} duplicates, ${figures.perSecond.toFixed(1)} deliveries/s, p50 ${figures.p50} ms, p99 ${figures.p99} ms, max ${figures.max} ms`,
  );
  // Per second from the first write's response: writes answered, events published by the relay, deliveries arrived.
  const perSecond = (times: number[]) => {
    const counts: number[] = [];
    for (const t of times) {
      const k = Math.max(0, Math.floor((t - firstAnswer) / 1000));
      while (counts.length <= k) counts.push(0);
      counts[k]++;
    }
    return counts.join(' ');
  };
  const firstArrivals = [...answered.keys()].flatMap((id) => arrivals.get(id)?.slice(0, 1) ?? []);
  console.log(`  ${s.name}, per second: writes answered ${perSecond([...answered.values()])} | events published ${perSecond(publishedAt)} | deliveries arrived ${perSecond(firstArrivals)}`);
  if (hanging) await reportTimeouts(s.name, b, hookIds.hanging, hanging, firstAnswer);
  return figures;
}

/** What became of the webhooks whose receiver never answers, read from the service's store once the scenario is over. */
async function reportTimeouts(
  name: string,
  b: WebhookBench,
  hookIds: string[],
  hanging: HttpsReceiver,
  firstAnswer: number,
): Promise<void> {
  const client = await MongoClient.connect(b.storeUrl);
  try {
    const db = client.db('bench_webhooks');
    const since = (d: Date | number) => `+${((new Date(d).getTime() - firstAnswer) / 1000).toFixed(1)} s`;
    const hooks = await db.collection<{ _id: string; active: boolean; updated_at: Date }>('webhooks').find({ _id: { $in: hookIds } }).toArray();
    const attempts = await db
      .collection<{ webhook_id: string; at: Date; ok: boolean; error_class: string | null; latency_ms: number }>('attempts')
      .find({ webhook_id: { $in: hookIds } })
      .toArray();
    const deliveries = await db.collection<{ status: string }>('deliveries').find({ webhook_id: { $in: hookIds } }, { projection: { status: 1 } }).toArray();
    const statuses = new Map<string, number>();
    for (const d of deliveries) statuses.set(d.status, (statuses.get(d.status) ?? 0) + 1);
    const classes = new Map<string, number>();
    for (const a of attempts) classes.set(a.ok ? 'ok' : (a.error_class ?? '?'), (classes.get(a.ok ? 'ok' : (a.error_class ?? '?')) ?? 0) + 1);
    const deactivated = hooks.filter((h) => !h.active).map((h) => h.updated_at.getTime()).sort((x, y) => x - y);
    const hangingArrivals = hanging.requests.filter((r) => bodyOf(r).type === 'client.created').map((r) => r.at).sort((x, y) => x - y);
    console.log(
      `  ${name}: ${hooks.length} timing-out webhooks got ${hangingArrivals.length} requests ` +
        `(first ${hangingArrivals.length ? since(hangingArrivals[0]) : '-'}, last ${hangingArrivals.length ? since(hangingArrivals[hangingArrivals.length - 1]) : '-'}); ` +
        `${attempts.length} attempts stored (${[...classes].map(([c, n]) => `${c} ${n}`).join(', ')}, latency ${attempts.length ? `${Math.min(...attempts.map((a) => a.latency_ms))}-${Math.max(...attempts.map((a) => a.latency_ms))} ms` : '-'}); ` +
        `${deactivated.length} of ${hooks.length} deactivated, ${deactivated.length ? `${since(deactivated[0])} to ${since(deactivated[deactivated.length - 1])}` : ''}; ` +
        `their deliveries: ${[...statuses].map(([st, n]) => `${st} ${n}`).join(', ')}`,
    );
  } finally {
    await client.close();
  }
}

function printWebhookTable(rows: WebhookFigures[]): void {
  console.log(`\n| webhook scenario (${WEBHOOK_EVENTS} client.created, ${WEBHOOK_TEAMS} teams) | deliveries/s | p50 ms | p99 ms | max ms | arrived | duplicates |`);
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const f of rows) {
    console.log(`| ${f.name} | ${f.perSecond.toFixed(1)} | ${f.p50} | ${f.p99} | ${f.max} | ${f.arrived} of ${f.written}${f.writeErrors ? ` (${f.writeErrors} writes failed)` : ''} | ${f.duplicates} |`);
  }
}

const run = `${Date.now().toString(36)}${process.pid.toString(36)}`;
const dir = mkdtempSync(join(tmpdir(), `lpm-bench-${run}-`));
// A throwaway CA and a certificate for 127.0.0.1, for the webhook receivers: the
// system trusts the CA through NODE_EXTRA_CA_CERTS (the CA plus the bundle already
// set there), and startHttpsReceiver reads the certificate from LPM_TEST_TLS_DIR.
let tls: ReturnType<typeof createTestTls>;
try {
  tls = createTestTls(join(dir, 'tls'), process.env.NODE_EXTRA_CA_CERTS);
} catch (err) {
  rmSync(dir, { recursive: true, force: true });
  throw err;
}
process.env.LPM_TEST_TLS_DIR = tls.dir;
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
  NODE_EXTRA_CA_CERTS: tls.caBundle,
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
};
// The webhooks service's defaults (5 s timeout, 64 attempts at once, 8 per webhook,
// retries 5m,30m,2h,12h,24h), and no deactivation e-mail leaves the machine.
for (const name of ['WEBHOOK_TIMEOUT_MS', 'WEBHOOK_CONCURRENCY', 'WEBHOOK_RETRY_DELAYS', 'SMTP_URL', 'AMQP_EXCHANGE']) delete env[name];
const exchange = 'lpm.events';
const receivers: HttpsReceiver[] = [];
let system: ChildProcess | undefined;
let cleaning: Promise<void> | undefined;
const cleanUp = () =>
  (cleaning ??= (async () => {
    if (system && system.exitCode === null) {
      const exited = new Promise((done) => system!.once('exit', done));
      system.kill('SIGTERM');
      await exited;
    }
    await Promise.all(receivers.map((r) => r.close()));
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
  const events = await createdEventCounter(env.AMQP_URL!, exchange);
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
  const relayRate = await relayThroughput(store.url, env.AMQP_URL!, 2000);
  console.log(`outbox relay alone: 2,000 documents with one event each, ${relayRate.toFixed(0)} events/s`);

  // Webhook deliveries: after the clients runs (their events fanned out to no webhook
  // first) and before the 100,000 cases, whose store load (the SLA sweeps read the
  // whole collection every minute) would slow every store write of a delivery.
  console.log(
    `\nwebhooks: ${WEBHOOK_EVENTS} POST /v1/clients per scenario through the gateway, ${WEBHOOK_CONCURRENCY} at a time, ` +
      `over ${WEBHOOK_TEAMS} new teams each with a webhook on client.created (timeout 5 s, at most 8 attempts in flight per webhook)`,
  );
  const bench: WebhookBench = { gatewayUrl, storeUrl: store.url, vhost, exchange, events, created, receivers };
  await webhooksSettled(vhost, exchange, 600_000);
  const webhookFigures: WebhookFigures[] = [];
  const scenarios: WebhookScenario[] = [
    { name: 'receiver answers at once', delayMs: 0, withTimeout: false },
    { name: 'receiver answers after 50 ms', delayMs: 50, withTimeout: false },
    { name: 'at once, beside a webhook per team that times out', delayMs: 0, withTimeout: true },
  ];
  for (const [i, s] of scenarios.entries()) webhookFigures.push(await webhookScenario(s, bench, i));
  printWebhookTable(webhookFigures);
  await events.close();

  // GET /v1/cases on one team with CASES cases, and a client's rename seen on its case.
  const casesUrl = `http://127.0.0.1:${port + 3}`;
  const caseOrm = await openGatewayStore({ url: store.url, dbPrefix: 'bench_' });
  const caseAccounts = new Accounts({ orm: caseOrm });
  const caseTeam = await caseAccounts.createTeam({ name: 'Bench cases', plan: 'enterprise', ownerName: 'Bench', ownerEmail: 'bench-cases@example.com' });
  const renameTeam = await caseAccounts.createTeam({ name: 'Bench rename', plan: 'enterprise', ownerName: 'Bench', ownerEmail: 'bench-rename@example.com' });
  await caseOrm.close();
  const teamHeaders = (t: typeof caseTeam) =>
    identityHeaders({ teamId: t.team.id, userId: t.user.id, scopes: ['read', 'write', 'admin'], settings: defaultTeamSettings() }, token);
  const caseHeaders = teamHeaders(caseTeam);
  const renameHeaders = teamHeaders(renameTeam);
  console.log('');
  await renameLatency('before seeding', serviceUrl, casesUrl, renameHeaders);

  const caseClients: string[] = [];
  for (let n = 0; n < 5; n++) {
    const res = await fetch(`${serviceUrl}/v1/clients`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...caseHeaders },
      body: JSON.stringify({ type: 'PJ', name: `Cliente dos casos ${n}`, segment: 'regular' }),
    });
    caseClients.push(((await res.json()) as { data: { id: string } }).data.id);
  }
  const seconds = await seedCases(store.url, caseTeam.team.id, caseClients);
  console.log(`\nseeded ${CASES.toLocaleString('en')} cases of one team with insertMany (batches of 1,000) in ${seconds.toFixed(1)} s (${(CASES / seconds).toFixed(0)} cases/s)`);
  await describeCasesStore(store.url, [
    { label: 'no filter', filter: { team_id: caseTeam.team.id } },
    { label: 'filter', filter: { team_id: caseTeam.team.id, status: 'ativo', priority: 'alta' } },
    { label: 'search', filter: { team_id: caseTeam.team.id, search_text: new RegExp(SEARCH) } },
  ]);
  // Before the list runs: a list request the gateway gave up on keeps running in the store.
  await renameLatency(`with ${CASES.toLocaleString('en')} cases stored`, serviceUrl, casesUrl, renameHeaders);

  console.log(`\nGET /v1/cases, ${CASES.toLocaleString('en')} cases of one team, 20 per page:`);
  const listRuns: ListRun[] = [
    { label: 'no filter', path: '/v1/cases?limit=20' },
    { label: 'filter', path: '/v1/cases?limit=20&status=ativo&priority=alta' },
    { label: 'search', path: `/v1/cases?limit=20&search=${SEARCH}` },
  ];
  for (const r of listRuns) figures.push(await measureList(`GET /v1/cases ${r.label} direct`, casesUrl, r, caseHeaders));
  // Through the gateway only without a filter: its minute limit is per team, and it gives up on an upstream after 30 s.
  figures.push(await measureList(`GET /v1/cases ${listRuns[0].label} gateway`, gatewayUrl, listRuns[0], { authorization: `Bearer ${caseTeam.apiKey}` }));
  console.log('\n| run | req/s | p50 ms | p99 ms | non-2xx or errors |');
  console.log('|---|---:|---:|---:|---:|');
  for (const f of figures) console.log(`| ${f.name} | ${f.rps >= 10 ? f.rps.toFixed(0) : f.rps.toFixed(2)} | ${f.p50} | ${f.p99} | ${f.errors} |`);
  printWebhookTable(webhookFigures);
} finally {
  await cleanUp();
}
