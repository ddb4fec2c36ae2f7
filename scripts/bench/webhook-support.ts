// The webhooks section's settings, receivers, queue watching (the gateway and service sections wait on the queues too) and reports (webhooks.ts runs the scenarios).
import { MongoClient, type Collection } from 'mongodb';
import type { HttpsReceiver, ReceivedRequest, ReceiverHandler } from './internals.ts';
import type { MachineLoad } from './machine-load.ts';
import { execFileAsync, sleep, type System } from './support.ts';

/** Writes a second, open loop (scheduled by time, not by completion), and for how long. */
export const STEADY_RATE = Number(process.env.BENCH_STEADY_RATE ?? 100);
export const STEADY_SECONDS = Number(process.env.BENCH_STEADY_SECONDS ?? 20);
/** Seconds of writes before the measured scenarios, to a webhook answering at once. */
export const STEADY_WARMUP_SECONDS = Number(process.env.BENCH_STEADY_WARMUP ?? 10);
/** How long deliveries are waited for after the last write. */
export const STEADY_PATIENCE_MS = Number(process.env.BENCH_STEADY_PATIENCE ?? 60) * 1000;
/**
 * Fresh enterprise teams per scenario, the writes spread over them: at least
 * BENCH_WEBHOOK_TEAMS, and enough that none passes 800 of its 1,000 requests a minute.
 */
export const WEBHOOK_TEAMS = Math.max(
  Number(process.env.BENCH_WEBHOOK_TEAMS ?? 5),
  Math.ceil((STEADY_RATE * Math.min(STEADY_SECONDS, 60)) / 800),
);
/** How long the webhooks service's queues may take to drain between scenarios. */
export const WEBHOOK_PATIENCE_MS = 120_000;
/** The queues of the webhooks service that must be empty (ready and unacked) between scenarios. */
const WEBHOOK_QUEUES = (exchange: string) => [`${exchange}.webhooks.fan-out`, `${exchange}.webhooks.attempts`];

/** The webhook with a rate_limit beside the others (fanout_throttled): deliveries owed and arrived, and the most in one second. */
export interface ThrottledFigures {
  owed: number;
  arrived: number;
  busiestSecond: number;
}

export interface WebhookFigures {
  name: string;
  written: number;
  /** Deliveries the writes owed the healthy receiver (writes x its webhooks per team). */
  owed: number;
  writeErrors: number;
  /** The writes' own response times. */
  writeP50: number;
  writeP99: number;
  arrived: number;
  duplicates: number;
  perSecond: number;
  p50: number;
  p99: number;
  max: number;
  /** The most events the clients service had not published yet, in one of the per-second samples. */
  maxBacklog: number;
  /** Commands the webhooks service sent the store over the scenario, per delivery that arrived. */
  roundtripsPerDelivery: number;
  /** Store commands of the clients service per answered write. */
  writeRoundtrips: number;
  /** The machine from the first write to the last arrival. */
  load: MachineLoad;
  /** The deliveries of the webhook with a rate_limit beside the others (fanout_throttled). */
  throttled?: ThrottledFigures;
}

/** Subscribes one webhook per URL for the team of `key`; their ids. */
export async function subscribeHooks(
  gatewayUrl: string,
  key: string,
  urls: string[],
  events: string[],
  extra: Record<string, unknown> = {},
): Promise<string[]> {
  const ids: string[] = [];
  for (const url of urls) {
    const res = await fetch(`${gatewayUrl}/v1/webhooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ url, events, ...extra }),
    });
    if (res.status !== 201) throw new Error(`POST /v1/webhooks answered ${res.status}: ${await res.text()}`);
    ids.push(((await res.json()) as { data: { id: string } }).data.id);
  }
  return ids;
}

/** The store commands a service of the system has sent, by `<command> <collection>` (its store_commands_total). */
export async function storeCommandsOf(serviceUrl: string): Promise<Map<string, number>> {
  const res = await fetch(`${serviceUrl}/metrics`);
  if (res.status !== 200) throw new Error(`${serviceUrl}/metrics answered ${res.status}`);
  const counts = new Map<string, number>();
  for (const line of (await res.text()).split('\n')) {
    const m = /^store_commands_total\{(.*)\} (\S+)$/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries([...m[1].matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    counts.set(`${labels.command} ${labels.collection}`, Number(m[2]));
  }
  return counts;
}

/** The events a service has not published yet from `collection` (its outbox_pending_events gauge). */
export async function outboxPendingOf(serviceUrl: string, collection: string): Promise<number> {
  const res = await fetch(`${serviceUrl}/metrics`);
  const line = (await res.text())
    .split('\n')
    .find((l) => l.startsWith('outbox_pending_events{') && l.includes(`collection="${collection}"`));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** The store commands a process of the system counted for one trace's requests before their answers (GET /metrics/commands/<trace id>), by `<command> <collection>`. */
export async function traceCommandsOf(serviceUrl: string, traceId: string): Promise<Map<string, number>> {
  const res = await fetch(`${serviceUrl}/metrics/commands/${traceId}`);
  if (res.status !== 200) throw new Error(`${serviceUrl}/metrics/commands answered ${res.status}`);
  return new Map(Object.entries((await res.json()) as Record<string, number>));
}

/** The store commands the webhooks service has sent, in all. */
export async function storeCommands(sys: System): Promise<number> {
  return [...(await storeCommandsOf(sys.serviceUrls.webhooks)).values()].reduce((a, b) => a + b, 0);
}

/** What a service sent the store between two readings of storeCommandsOf, most first. */
export function commandsBetween(before: Map<string, number>, after: Map<string, number>): [string, number][] {
  return [...after]
    .map(([k, n]): [string, number] => [k, n - (before.get(k) ?? 0)])
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1]);
}

const received = { status: 200, body: '{"received":true}', headers: { 'content-type': 'application/json' } };
/** The fields of a delivery's body the bench reads. */
type DeliveryBody = { type?: string; webhook_id?: string; created_at?: string; data?: { object?: { id?: string } } };
export const bodyOf = (r: ReceivedRequest): DeliveryBody => {
  try {
    return JSON.parse(r.body) as DeliveryBody;
  } catch {
    return {};
  }
};
/** Answers 200 after `delayMs`. */
export const answerAfter =
  (delayMs: number): ReceiverHandler =>
  async () => {
    if (delayMs > 0) await sleep(delayMs);
    return received;
  };
/** Answers the signed ping a new webhook must pass, and never any delivery. */
export const neverAnswer: ReceiverHandler = (r) => (bodyOf(r).type === 'ping' ? received : undefined);

/** Ready and unacknowledged messages of the vhost's queues, by name (rabbitmqctl: checkQueue cannot see unacked ones). */
/** The broker a system runs on as rabbitmqctl reaches it: a vhost of the machine's node, or of a cluster's node (`-n`). */
export interface BrokerView {
  vhost: string;
  node?: string;
}

type Broker = string | BrokerView;

const targetOf = (b: Broker): string[] =>
  typeof b === 'string' ? ['-p', b] : [...(b.node ? ['-n', b.node] : []), '-p', b.vhost];

async function queueDepths(broker: Broker): Promise<Map<string, { ready: number; unacked: number }>> {
  // Not execFileSync: the receivers answer in this process.
  const args = [
    'list_queues',
    ...targetOf(broker),
    '-q',
    '--formatter',
    'json',
    'name',
    'messages_ready',
    'messages_unacknowledged',
  ];
  const { stdout: out } = await execFileAsync('rabbitmqctl', args, { encoding: 'utf8' });
  const rows = JSON.parse(out) as { name: string; messages_ready: number; messages_unacknowledged: number }[];
  return new Map(rows.map((r) => [r.name, { ready: r.messages_ready, unacked: r.messages_unacknowledged }]));
}

/**
 * Waits until the webhooks service has nothing left to do now: its fan-out and
 * attempts queues, and the 1 s queue of jobs deferred for a busy webhook, are empty
 * with nothing unacknowledged, twice in a row. Retries due in minutes (the 5 min
 * tier of a timed-out attempt) are left in their delay queues.
 */
export function webhooksSettled(broker: Broker, exchange: string, patienceMs = WEBHOOK_PATIENCE_MS): Promise<void> {
  const names = new Set([...WEBHOOK_QUEUES(exchange), `${exchange}.webhooks.attempts.delay.1000`]);
  return queuesSettled(broker, (n) => names.has(n), 'the webhooks queues', patienceMs);
}

/**
 * Waits until the system's consumers have worked off what the run before wrote
 * (every queue of `exchange` but delay and dead-letter queues empty, ready and
 * unacked), so a measurement does not share the machine with them.
 */
export function consumersSettled(broker: Broker, exchange: string, patienceMs = WEBHOOK_PATIENCE_MS): Promise<void> {
  return queuesSettled(
    broker,
    (n) => n.startsWith(`${exchange}.`) && !n.includes('.delay.') && !n.endsWith('.dlq'),
    "the system's queues",
    patienceMs,
  );
}

/**
 * Waits until no document of `clients` is flagged `outbox_pending`: a scenario
 * before (the POST floods of clients and gateway) may leave the relay thousands of
 * documents to empty, which would share the store with the steady writes.
 */
export async function outboxSettled(
  clients: Collection<{ _id: string }>,
  patienceMs = WEBHOOK_PATIENCE_MS,
): Promise<void> {
  const started = Date.now();
  const first = await clients.countDocuments({ outbox_pending: true });
  let left = first;
  while (left > 0) {
    if (Date.now() - started > patienceMs) {
      console.log(`  the clients outbox still held ${left} flagged documents after ${patienceMs / 1000} s`);
      return;
    }
    await sleep(500);
    left = await clients.countDocuments({ outbox_pending: true });
  }
  if (first > 0)
    console.log(
      `  waited ${((Date.now() - started) / 1000).toFixed(1)} s for the relay to empty the outbox of ${first} client documents`,
    );
}

async function queuesSettled(
  broker: Broker,
  watched: (name: string) => boolean,
  what: string,
  patienceMs: number,
): Promise<void> {
  const started = Date.now();
  let quiet = 0;
  let last = '';
  let wasBusy = false;
  while (quiet < 2) {
    const depths = await queueDepths(broker);
    const busy = [...depths].filter(([n, d]) => watched(n) && d.ready + d.unacked > 0);
    last = busy.map(([n, d]) => `${n} ${d.ready}+${d.unacked}`).join(', ');
    quiet = busy.length ? 0 : quiet + 1;
    wasBusy ||= busy.length > 0;
    if (Date.now() - started > patienceMs) {
      console.log(`  ${what} still busy after ${patienceMs / 1000} s (ready+unacked): ${last}`);
      return;
    }
    await sleep(500);
  }
  if (wasBusy) console.log(`  waited ${((Date.now() - started) / 1000).toFixed(1)} s for ${what} to drain`);
}

/** What became of the webhooks whose receiver never answers, read from the service's store (`database`) once the scenario is over. */
export async function reportTimeouts(
  name: string,
  storeUrl: string,
  database: string,
  hookIds: string[],
  hanging: HttpsReceiver,
  firstAnswer: number,
): Promise<void> {
  const client = await MongoClient.connect(storeUrl);
  try {
    const db = client.db(database);
    const since = (d: Date | number) => `+${((new Date(d).getTime() - firstAnswer) / 1000).toFixed(1)} s`;
    const hooks = await db
      .collection<{ _id: string; active: boolean; updated_at: Date }>('webhooks')
      .find({ _id: { $in: hookIds } })
      .toArray();
    const attempts = await db
      .collection<{ webhook_id: string; at: Date; ok: boolean; error_class: string | null; latency_ms: number }>(
        'attempts',
      )
      .find({ webhook_id: { $in: hookIds } })
      .toArray();
    const deliveries = await db
      .collection<{ status: string }>('deliveries')
      .find({ webhook_id: { $in: hookIds } }, { projection: { status: 1 } })
      .toArray();
    const statuses = new Map<string, number>();
    for (const d of deliveries) statuses.set(d.status, (statuses.get(d.status) ?? 0) + 1);
    const classes = new Map<string, number>();
    for (const a of attempts)
      classes.set(a.ok ? 'ok' : (a.error_class ?? '?'), (classes.get(a.ok ? 'ok' : (a.error_class ?? '?')) ?? 0) + 1);
    const deactivated = hooks
      .filter((h) => !h.active)
      .map((h) => h.updated_at.getTime())
      .sort((x, y) => x - y);
    const hangingArrivals = hanging.requests
      .filter((r) => bodyOf(r).type === 'client.created')
      .map((r) => r.at)
      .sort((x, y) => x - y);
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

export function printWebhookTable(rows: WebhookFigures[]): void {
  console.log(
    `\n| webhook scenario (client.created written for ${STEADY_SECONDS} s, ${WEBHOOK_TEAMS} teams) | write p50 ms | deliveries/s | p50 ms | p99 ms | max ms | arrived | duplicates | max backlog | store round trips a delivery |`,
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const f of rows) {
    console.log(
      `| ${f.name} | ${f.writeP50.toFixed(0)} | ${f.perSecond.toFixed(1)} | ${f.p50} | ${f.p99} | ${f.max} | ${f.arrived} of ${f.owed}` +
        `${f.writeErrors ? ` (${f.writeErrors} writes failed)` : ''} | ${f.duplicates} | ${f.maxBacklog} | ${f.roundtripsPerDelivery.toFixed(2)} |`,
    );
  }
}
