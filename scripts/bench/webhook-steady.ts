// The steady scenarios of section `webhooks` (webhooks.ts): clients written through
// the gateway at a given rate, open loop, and their client.created delivered to local
// HTTPS receivers; the figures of one scenario and its printed account.
import type { Collection } from 'mongodb';
import { describeLoad, loadBetween, snapshotLoad, type MachineLoad } from './machine-load.ts';
import { startHttpsReceiver, type HttpsReceiver } from './internals.ts';
import { quantile, sleep, type Bench, type EventCounter, type System } from './support.ts';
import { createTeams } from './teams.ts';
import {
  STEADY_PATIENCE_MS,
  WEBHOOK_TEAMS,
  answerAfter,
  commandsBetween,
  outboxPendingOf,
  storeCommands,
  storeCommandsOf,
  subscribeHooks,
  outboxSettled,
  bodyOf,
  neverAnswer,
  reportTimeouts,
  webhooksSettled,
  type BrokerView,
  type WebhookFigures,
} from './webhook-support.ts';
import { throttledHook } from './webhook-throttled.ts';

export interface WebhookBench {
  bench: Bench;
  sys: System;
  events: EventCounter;
  /** The clients service's collection, for the relay's backlog. */
  clients: Collection<{ _id: string }>;
  /** client.created events written since the counter was made. */
  created: number;
  /** The system's broker when it is not the run's (a cluster's): its URL and how rabbitmqctl reaches it. */
  broker?: { amqpUrl: string; view: BrokerView };
}

export interface WebhookScenario {
  /** Its part of the JSON keys: webhooks.<key>.p50_ms ... */
  key: string;
  name: string;
  /** Writes a second. */
  rate: number;
  /** Webhooks on client.created per team, each to its own path of the healthy receiver. */
  hooksPerTeam: number;
  /** The healthy receiver's answer delay. */
  delayMs: number;
  /** One more webhook per team, to a receiver that never answers. */
  withTimeout: boolean;
  /** Seconds of writes. */
  seconds: number;
  /** One more webhook, in the first team, to a receiver of its own, limited to this many deliveries a second. */
  throttled?: number;
}

/**
 * One scenario: WEBHOOK_TEAMS fresh enterprise teams, each with a webhook on
 * client.created to the scenario's healthy receiver (and, withTimeout, one to a
 * receiver that never answers); POST /v1/clients through the gateway, STEADY_RATE a
 * second for STEADY_SECONDS, each sent at its scheduled instant whether the ones
 * before were answered or not, round robin over the teams. Latency: from the event's
 * `created_at` (stamped by the clients service while it handles the POST) to the
 * instant the receiver had the body of that delivery (Date.now() in this process, on
 * the same machine's clock). The write's own latency is the write p50/p99 beside it.
 */
export async function webhookScenario(
  s: WebhookScenario,
  b: WebhookBench,
  index: number,
  receivers: HttpsReceiver[],
): Promise<WebhookFigures> {
  const healthy = await startHttpsReceiver(answerAfter(s.delayMs));
  receivers.push(healthy);
  const hanging = s.withTimeout ? await startHttpsReceiver(neverAnswer) : undefined;
  if (hanging) receivers.push(hanging);
  const { keys, teamHooks, hangingHooks } = await subscribeTeams(s, b, index, healthy, hanging);
  const throttled = s.throttled ? await throttledHook(s.throttled, b.sys.gatewayUrl, keys[0], receivers) : undefined;

  const arrivals = new Arrivals(healthy);
  const commandsBefore = await storeCommands(b.sys);
  const writerBefore = await storeCommandsOf(b.sys.serviceUrls.clients);

  await outboxSettled(b.clients);
  const relay = sampleRelay(b);
  const writes = await writeSteadily(s, b, index, keys);
  b.created += writes.answered.size;
  const deadline = Date.now() + STEADY_PATIENCE_MS;
  // When the clients service's relay had published the scenario's last event, beside the deliveries.
  const relayed = b.events.publishedBy(b.created, deadline);
  /** Every delivery the writes owe the healthy receiver: client and webhook. */
  const owed = [...writes.answered].flatMap(([id, w]) =>
    teamHooks[w.team].map((hook) => ({ id, key: `${id} ${hook}` })),
  );
  for (;;) {
    arrivals.collect();
    if (arrivals.byDelivery.size >= owed.length || Date.now() > deadline) break;
    await sleep(100);
  }
  const load = loadBetween(writes.loadBefore, snapshotLoad());
  const lastPublished = await relayed;
  await relay.stop();
  await webhooksSettled(b.broker?.view ?? b.bench.vhost, b.sys.tree.exchange);
  arrivals.collect();
  // The counters' fold of the last attempts (every second) belongs to the scenario's work too.
  await sleep(2500);
  const commands = (await storeCommands(b.sys)) - commandsBefore;
  const writer = commandsBetween(writerBefore, await storeCommandsOf(b.sys.serviceUrls.clients));
  const writerTotal = writer.reduce((sum, [, n]) => sum + n, 0);

  const firstAnswer = Math.min(...[...writes.answered.values()].map((w) => w.at));
  const delivered = deliveredOf(owed, arrivals, firstAnswer);
  const run: ScenarioRun = {
    s,
    writes,
    relay,
    arrivals,
    owed,
    delivered,
    firstAnswer,
    lastPublished,
    commands,
    writer,
    writerTotal,
    connections: healthy.connections,
  };
  const figures = figuresOf(run, load);
  printScenario(run, figures);
  if (throttled)
    figures.throttled = await throttled.report(
      s.name,
      [...writes.answered.values()].filter((w) => w.team === 0).length,
      STEADY_PATIENCE_MS,
    );
  if (hanging)
    await reportTimeouts(
      s.name,
      b.bench.store.url,
      `${b.sys.tree.dbPrefix}webhooks`,
      hangingHooks,
      hanging,
      firstAnswer,
    );
  return figures;
}

/** The scenario's teams, each with its webhooks on client.created: the healthy ones by team, and the hanging ones. */
async function subscribeTeams(
  s: WebhookScenario,
  b: WebhookBench,
  index: number,
  healthy: HttpsReceiver,
  hanging: HttpsReceiver | undefined,
) {
  const issued = await createTeams(
    b.bench,
    b.sys.tree,
    Array.from({ length: WEBHOOK_TEAMS }, (_, n) => `Bench webhooks ${index}.${n}`),
  );
  const keys = issued.map((t) => t.api_key);
  const hangingHooks: string[] = [];
  /** The healthy webhooks of each team (by the team's index). */
  const teamHooks: string[][] = [];
  for (const [n, key] of keys.entries()) {
    teamHooks.push(
      await subscribeHooks(
        b.sys.gatewayUrl,
        key,
        Array.from({ length: s.hooksPerTeam }, (_, k) => `${healthy.url}/team-${n}/hook-${k}`),
        ['client.created'],
      ),
    );
    if (hanging)
      hangingHooks.push(
        ...(await subscribeHooks(b.sys.gatewayUrl, key, [`${hanging.url}/team-${n}`], ['client.created'])),
      );
  }
  return { keys, teamHooks, hangingHooks };
}

/** Arrivals of client.created at the healthy receiver, by client and webhook (parsed as they come). */
class Arrivals {
  readonly byDelivery = new Map<string, number[]>();
  /** Each client's client.created `created_at` (ms), from its deliveries. */
  readonly createdAt = new Map<string, number>();
  private parsed = 0;
  private readonly receiver: HttpsReceiver;

  constructor(receiver: HttpsReceiver) {
    this.receiver = receiver;
  }

  collect(): void {
    for (; this.parsed < this.receiver.requests.length; this.parsed++) {
      const r = this.receiver.requests[this.parsed];
      const body = bodyOf(r);
      const id = body.data?.object?.id;
      if (body.type !== 'client.created' || !id) continue;
      const key = `${id} ${body.webhook_id}`;
      this.createdAt.set(id, Date.parse(body.created_at ?? ''));
      const list = this.byDelivery.get(key) ?? [];
      list.push(r.at);
      this.byDelivery.set(key, list);
    }
  }
}

/**
 * How many of the scenario's events the relay had published, sampled every 250 ms, and
 * the relay's backlog about each second, until stopped. Two loops: under load the
 * backlog's count takes seconds, and must not hold up the other's samples.
 */
function sampleRelay(b: WebhookBench) {
  const before = b.created;
  const publishedAt: number[] = [];
  const backlog: number[] = [];
  let sampling = true;
  const sampler = Promise.all([
    (async () => {
      let seen = 0;
      while (sampling) {
        const now = (await b.events.published()) - before;
        for (; seen < now; seen++) publishedAt.push(Date.now());
        await sleep(250);
      }
    })(),
    (async () => {
      while (sampling) {
        backlog.push(await outboxPendingOf(b.sys.serviceUrls.clients, 'clients'));
        await sleep(1000);
      }
    })(),
  ]);
  const stop = async () => {
    sampling = false;
    await sampler;
  };
  return { publishedAt, backlog, stop };
}

/** POST /v1/clients at s.rate for s.seconds, each at its instant, round robin over the teams' keys; resolves once every one is answered. */
async function writeSteadily(s: WebhookScenario, b: WebhookBench, index: number, keys: string[]) {
  /** Each answered write's client: when its response was read, and its team. */
  const answered = new Map<string, { at: number; team: number }>();
  const times: number[] = [];
  let errors = 0;
  const write = async (i: number) => {
    const sent = performance.now();
    try {
      const res = await fetch(`${b.sys.gatewayUrl}/v1/clients`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${keys[i % keys.length]}` },
        body: JSON.stringify({ type: 'PJ', name: `Webhook bench ${index}.${i}`, segment: 'regular' }),
      });
      const body = (await res.json()) as { data?: { id: string } };
      times.push(performance.now() - sent);
      if (res.status === 201 && body.data) answered.set(body.data.id, { at: Date.now(), team: i % keys.length });
      else errors++;
    } catch {
      errors++;
    }
  };
  const total = Math.round(s.rate * s.seconds);
  const writes: Promise<void>[] = [];
  const loadBefore = snapshotLoad();
  const writesStarted = performance.now();
  for (let i = 0; i < total; i++) {
    const wait = writesStarted + (i * 1000) / s.rate - performance.now();
    if (wait > 0) await sleep(wait);
    writes.push(write(i));
  }
  const sendSeconds = (performance.now() - writesStarted) / 1000;
  await Promise.all(writes);
  return { answered, times, errors, total, sendSeconds, loadBefore };
}

type Owed = { id: string; key: string }[];

/** The owed deliveries that arrived: their latencies (sorted), duplicates, and the last first arrival. */
function deliveredOf(owed: Owed, arrivals: Arrivals, firstAnswer: number) {
  const latencies: number[] = [];
  let arrived = 0;
  let duplicates = 0;
  let lastArrival = firstAnswer;
  for (const { id, key } of owed) {
    const times = arrivals.byDelivery.get(key);
    if (!times) continue;
    arrived++;
    duplicates += times.length - 1;
    latencies.push(times[0] - arrivals.createdAt.get(id)!);
    lastArrival = Math.max(lastArrival, times[0]);
  }
  latencies.sort((x, y) => x - y);
  return { latencies, arrived, duplicates, lastArrival };
}

interface ScenarioRun {
  s: WebhookScenario;
  writes: Awaited<ReturnType<typeof writeSteadily>>;
  relay: ReturnType<typeof sampleRelay>;
  arrivals: Arrivals;
  owed: Owed;
  delivered: ReturnType<typeof deliveredOf>;
  firstAnswer: number;
  lastPublished: number | null;
  /** Store commands of the webhooks service. */
  commands: number;
  /** Store commands of the clients service, by kind, and their sum. */
  writer: [string, number][];
  writerTotal: number;
  /** TLS connections the healthy receiver accepted. */
  connections: number;
}

function figuresOf(
  { s, writes, relay, owed, delivered, firstAnswer, commands, writerTotal }: ScenarioRun,
  load: MachineLoad,
): WebhookFigures {
  const { latencies, arrived, duplicates, lastArrival } = delivered;
  const writeTimes = writes.times.sort((x, y) => x - y);
  return {
    name: s.name,
    written: writes.answered.size,
    owed: owed.length,
    writeErrors: writes.errors,
    writeP50: writeTimes.length ? quantile(writeTimes, 0.5) : NaN,
    writeP99: writeTimes.length ? quantile(writeTimes, 0.99) : NaN,
    arrived,
    duplicates,
    perSecond: arrived / Math.max((lastArrival - firstAnswer) / 1000, 0.001),
    p50: latencies.length ? quantile(latencies, 0.5) : NaN,
    p99: latencies.length ? quantile(latencies, 0.99) : NaN,
    max: latencies.length ? latencies[latencies.length - 1] : NaN,
    maxBacklog: Math.max(0, ...relay.backlog),
    roundtripsPerDelivery: commands / Math.max(arrived, 1),
    writeRoundtrips: writerTotal / Math.max(writes.answered.size, 1),
    load,
  };
}

function printScenario(run: ScenarioRun, figures: WebhookFigures): void {
  const { s, writes, relay, arrivals, owed, firstAnswer, lastPublished, commands, writer, writerTotal } = run;
  const { arrived, duplicates, lastArrival } = run.delivered;
  const { answered } = writes;
  const writeErrors = figures.writeErrors;
  const since = (t: number) => `+${((t - firstAnswer) / 1000).toFixed(1)} s`;
  console.log(
    `  ${s.name}: ${writes.total} writes sent in ${writes.sendSeconds.toFixed(1)} s, ${answered.size} answered 201 (p50 ${figures.writeP50.toFixed(0)} ms, p99 ${figures.writeP99.toFixed(0)} ms)` +
      `${writeErrors ? `, ${writeErrors} refused or failed` : ''}; ` +
      `last event published by the relay ${lastPublished ? since(lastPublished) : 'not seen'}, last delivery arrived ${since(lastArrival)} ` +
      `(times from the first write's response)`,
  );
  console.log(
    `  ${s.name}: ${arrived} of ${owed.length} delivered${arrived < owed.length ? ` (${owed.length - arrived} missing ${STEADY_PATIENCE_MS / 1000} s after the last write)` : ''}, ` +
      `${duplicates} duplicates, ${figures.perSecond.toFixed(1)} deliveries/s, p50 ${figures.p50} ms, p99 ${figures.p99} ms, max ${figures.max} ms; ` +
      `the webhooks service sent the store ${commands} commands (${figures.roundtripsPerDelivery.toFixed(2)} a delivery) ` +
      `over ${run.connections} TLS connections to the receiver`,
  );
  const perWrite = (n: number) => (n / Math.max(answered.size, 1)).toFixed(2);
  console.log(
    `  ${s.name}: the clients service sent the store ${writerTotal} commands, ${perWrite(writerTotal)} a write: ` +
      writer
        .slice(0, 8)
        .map(([k, n]) => `${k} ${perWrite(n)}`)
        .join(', '),
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
  const firstArrivals = owed.flatMap(({ key }) => arrivals.byDelivery.get(key)?.slice(0, 1) ?? []);
  console.log(
    `  ${s.name}, per second: writes answered ${perSecond([...answered.values()].map((w) => w.at))} | events published ${perSecond(relay.publishedAt)} | ` +
      `deliveries arrived ${perSecond(firstArrivals)} | relay backlog (a count each second or as fast as the store answers) ${relay.backlog.join(' ')}`,
  );
  console.log(`  ${s.name}, the machine from the first write to the last arrival: ${describeLoad(figures.load)}`);
}
