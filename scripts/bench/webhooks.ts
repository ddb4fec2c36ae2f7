// Scenario `webhooks`: client.created delivered to local HTTPS receivers while clients
// are written through the gateway at a steady rate (STEADY_RATE a second for
// STEADY_SECONDS, open loop), in three sub-scenarios: receivers answering at once
// (`steady`), after 50 ms (`steady_slow`), and at once beside a webhook per team whose
// receiver never answers (`steady_timeout`). A warm-up like `steady` but shorter
// (STEADY_WARMUP_SECONDS, reported as `warmup`) comes first: on a system just
// started, its JIT, pools and caches are still cold. Figures: the time from the event's
// creation (its `created_at`) to the delivery's arrival, the write's own latency, the
// store commands of the clients service per write and of the webhooks service per
// delivery, the share delivered, and the relay's backlog (the events the clients
// service has not published yet, its outbox_pending_events gauge, sampled each second). On this checkout's system,
// after the clients runs and before the cases are stored (whose SLA sweeps would slow
// every store write of a delivery). Each scenario starts once the relay has emptied
// what the runs before left flagged, so it measures a steady state, not a recovery.
import { connect } from 'amqplib';
import { MongoClient, type Collection } from 'mongodb';
import { newEvent } from '../../shared/src/events.ts';
import { newId } from '../../shared/src/ids.ts';
import { deliveryLogScenario } from './delivery-log.ts';
import { describeLoad, loadBetween, recordLoad, snapshotLoad, type MachineLoad } from './machine-load.ts';
import { startHttpsReceiver, type HttpsReceiver } from './internals.ts';
import { createdEventCounter, quantile, sleep, type Bench, type EventCounter, type System } from './support.ts';
import { createTeams } from './teams.ts';
import {
  STEADY_PATIENCE_MS,
  STEADY_RATE,
  STEADY_SECONDS,
  STEADY_WARMUP_SECONDS,
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
  printWebhookTable,
  reportTimeouts,
  webhooksSettled,
  type WebhookFigures,
} from './webhook-support.ts';

interface WebhookBench {
  bench: Bench;
  sys: System;
  events: EventCounter;
  /** The clients service's collection, for the relay's backlog. */
  clients: Collection<{ _id: string }>;
  /** client.created events written since the counter was made. */
  created: number;
}

interface WebhookScenario {
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
async function webhookScenario(s: WebhookScenario, b: WebhookBench, index: number, receivers: HttpsReceiver[]): Promise<WebhookFigures> {
  const healthy = await startHttpsReceiver(answerAfter(s.delayMs));
  receivers.push(healthy);
  const hanging = s.withTimeout ? await startHttpsReceiver(neverAnswer) : undefined;
  if (hanging) receivers.push(hanging);

  const issued = await createTeams(b.bench, b.sys.tree, Array.from({ length: WEBHOOK_TEAMS }, (_, n) => `Bench webhooks ${index}.${n}`));
  const keys = issued.map((t) => t.api_key);
  const hookIds = { healthy: [] as string[], hanging: [] as string[] };
  /** The healthy webhooks of each team (by the team's index). */
  const teamHooks: string[][] = [];
  for (const [n, key] of keys.entries()) {
    teamHooks.push(await subscribeHooks(b.sys.gatewayUrl, key, Array.from({ length: s.hooksPerTeam }, (_, k) => `${healthy.url}/team-${n}/hook-${k}`), ['client.created']));
    hookIds.healthy.push(...teamHooks[n]);
    if (hanging) hookIds.hanging.push(...(await subscribeHooks(b.sys.gatewayUrl, key, [`${hanging.url}/team-${n}`], ['client.created'])));
  }

  // Arrivals of client.created at the healthy receiver, by client and webhook (parsed as they come).
  const arrivals = new Map<string, number[]>();
  /** Each client's client.created `created_at` (ms), from its deliveries. */
  const createdAt = new Map<string, number>();
  let parsed = 0;
  const collect = () => {
    for (; parsed < healthy.requests.length; parsed++) {
      const r = healthy.requests[parsed];
      const body = bodyOf(r);
      const id = body.data?.object?.id;
      if (body.type !== 'client.created' || !id) continue;
      const key = `${id} ${body.webhook_id}`;
      createdAt.set(id, Date.parse(body.created_at ?? ''));
      const list = arrivals.get(key) ?? [];
      list.push(r.at);
      arrivals.set(key, list);
    }
  };
  const commandsBefore = await storeCommands(b.sys);
  const writerBefore = await storeCommandsOf(b.sys.clientsUrl);

  await outboxSettled(b.clients);
  // How many of the scenario's events the relay had published, sampled every 250 ms, and
  // the relay's backlog about each second, until the deliveries are in. Two loops: under
  // load the backlog's count takes seconds, and must not hold up the other's samples.
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
        backlog.push(await outboxPendingOf(b.sys.clientsUrl, 'clients'));
        await sleep(1000);
      }
    })(),
  ]);
  /** Each answered write's client: when its response was read, and its team. */
  const answered = new Map<string, { at: number; team: number }>();
  const writeTimes: number[] = [];
  let writeErrors = 0;
  const write = async (i: number) => {
    const sent = performance.now();
    try {
      const res = await fetch(`${b.sys.gatewayUrl}/v1/clients`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${keys[i % keys.length]}` },
        body: JSON.stringify({ type: 'PJ', name: `Webhook bench ${index}.${i}`, segment: 'regular' }),
      });
      const body = (await res.json()) as { data?: { id: string } };
      writeTimes.push(performance.now() - sent);
      if (res.status === 201 && body.data) answered.set(body.data.id, { at: Date.now(), team: i % keys.length });
      else writeErrors++;
    } catch {
      writeErrors++;
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
  b.created += answered.size;
  const deadline = Date.now() + STEADY_PATIENCE_MS;
  // When the clients service's relay had published the scenario's last event, beside the deliveries.
  const relayed = b.events.publishedBy(b.created, deadline);
  /** Every delivery the writes owe the healthy receiver: client and webhook. */
  const owed = [...answered].flatMap(([id, w]) => teamHooks[w.team].map((hook) => ({ id, key: `${id} ${hook}` })));
  for (;;) {
    collect();
    if (arrivals.size >= owed.length || Date.now() > deadline) break;
    await sleep(100);
  }
  const load = loadBetween(loadBefore, snapshotLoad());
  const lastPublished = await relayed;
  sampling = false;
  await sampler;
  await webhooksSettled(b.bench.vhost, b.sys.tree.exchange);
  collect();
  // The counters' fold of the last attempts (every second) belongs to the scenario's work too.
  await sleep(2500);
  const commands = (await storeCommands(b.sys)) - commandsBefore;
  const writer = commandsBetween(writerBefore, await storeCommandsOf(b.sys.clientsUrl));
  const writerTotal = writer.reduce((sum, [, n]) => sum + n, 0);

  const firstAnswer = Math.min(...[...answered.values()].map((w) => w.at));
  const latencies: number[] = [];
  let arrived = 0;
  let duplicates = 0;
  let lastArrival = firstAnswer;
  for (const { id, key } of owed) {
    const times = arrivals.get(key);
    if (!times) continue;
    arrived++;
    duplicates += times.length - 1;
    latencies.push(times[0] - createdAt.get(id)!);
    lastArrival = Math.max(lastArrival, times[0]);
  }
  latencies.sort((x, y) => x - y);
  writeTimes.sort((x, y) => x - y);
  const figures: WebhookFigures = {
    name: s.name,
    written: answered.size,
    owed: owed.length,
    writeErrors,
    writeP50: writeTimes.length ? quantile(writeTimes, 0.5) : NaN,
    writeP99: writeTimes.length ? quantile(writeTimes, 0.99) : NaN,
    arrived,
    duplicates,
    perSecond: arrived / Math.max((lastArrival - firstAnswer) / 1000, 0.001),
    p50: latencies.length ? quantile(latencies, 0.5) : NaN,
    p99: latencies.length ? quantile(latencies, 0.99) : NaN,
    max: latencies.length ? latencies[latencies.length - 1] : NaN,
    maxBacklog: Math.max(0, ...backlog),
    roundtripsPerDelivery: commands / Math.max(arrived, 1),
    writeRoundtrips: writerTotal / Math.max(answered.size, 1),
    load,
  };
  const since = (t: number) => `+${((t - firstAnswer) / 1000).toFixed(1)} s`;
  console.log(
    `  ${s.name}: ${total} writes sent in ${sendSeconds.toFixed(1)} s, ${answered.size} answered 201 (p50 ${figures.writeP50.toFixed(0)} ms, p99 ${figures.writeP99.toFixed(0)} ms)` +
      `${writeErrors ? `, ${writeErrors} refused or failed` : ''}; ` +
      `last event published by the relay ${lastPublished ? since(lastPublished) : 'not seen'}, last delivery arrived ${since(lastArrival)} ` +
      `(times from the first write's response)`,
  );
  console.log(
    `  ${s.name}: ${arrived} of ${owed.length} delivered${arrived < owed.length ? ` (${owed.length - arrived} missing ${STEADY_PATIENCE_MS / 1000} s after the last write)` : ''}, ` +
      `${duplicates} duplicates, ${figures.perSecond.toFixed(1)} deliveries/s, p50 ${figures.p50} ms, p99 ${figures.p99} ms, max ${figures.max} ms; ` +
      `the webhooks service sent the store ${commands} commands (${figures.roundtripsPerDelivery.toFixed(2)} a delivery) ` +
      `over ${healthy.connections} TLS connections to the receiver`,
  );
  const perWrite = (n: number) => (n / Math.max(answered.size, 1)).toFixed(2);
  console.log(
    `  ${s.name}: the clients service sent the store ${writerTotal} commands, ${perWrite(writerTotal)} a write: ` +
      writer.slice(0, 8).map(([k, n]) => `${k} ${perWrite(n)}`).join(', '),
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
  const firstArrivals = owed.flatMap(({ key }) => arrivals.get(key)?.slice(0, 1) ?? []);
  console.log(
    `  ${s.name}, per second: writes answered ${perSecond([...answered.values()].map((w) => w.at))} | events published ${perSecond(publishedAt)} | ` +
      `deliveries arrived ${perSecond(firstArrivals)} | relay backlog (a count each second or as fast as the store answers) ${backlog.join(' ')}`,
  );
  console.log(`  ${s.name}, the machine from the first write to the last arrival: ${describeLoad(load)}`);
  if (hanging) await reportTimeouts(s.name, b.bench.store.url, `${b.sys.tree.dbPrefix}webhooks`, hookIds.hanging, hanging, firstAnswer);
  return figures;
}

/** BENCH_WEBHOOK_SCENARIOS: the scenarios to run (their keys, comma-separated); unset: all. */
const WEBHOOK_SCENARIOS = process.env.BENCH_WEBHOOK_SCENARIOS?.split(',').map((k) => k.trim());
/** The fan-out scenario: writes a second, and webhooks a team on client.created. */
const FANOUT_RATE = 50;
const FANOUT_HOOKS = 20;
/** The capacity scenario's deliveries: CAPACITY_HOOKS webhooks on each of WEBHOOK_TEAMS teams. */
const CAPACITY_DELIVERIES = 10_000;
const CAPACITY_HOOKS = 20;

/**
 * `capacity`: CAPACITY_DELIVERIES deliveries owed at once, drained as fast as the
 * service can, to receivers that answer at once. financial.paid events published
 * straight to the exchange, all within a few ms, for fresh teams with CAPACITY_HOOKS
 * webhooks on financial.paid each; from the first publish to the last arrival. Only
 * the webhooks service consumes that type, and no other scenario counts it: the
 * client.updated of before also reached the four services' client views, whose work
 * took most of the machine for the scenario's first seconds on a slow one.
 */
async function capacityScenario(
  b: WebhookBench,
  receivers: HttpsReceiver[],
): Promise<{ perSecond: number; seconds: number; arrived: number; roundtripsPerDelivery: number; load: MachineLoad }> {
  const receiver = await startHttpsReceiver(answerAfter(0));
  receivers.push(receiver);
  const issued = await createTeams(b.bench, b.sys.tree, Array.from({ length: WEBHOOK_TEAMS }, (_, n) => `Bench webhooks capacity ${n}`));
  for (const [n, t] of issued.entries()) {
    await subscribeHooks(b.sys.gatewayUrl, t.api_key, Array.from({ length: CAPACITY_HOOKS }, (_, k) => `${receiver.url}/capacity-${n}/hook-${k}`), ['financial.paid']);
  }
  const events = Array.from({ length: CAPACITY_DELIVERIES / CAPACITY_HOOKS }, (_, i) =>
    newEvent('financial.paid', issued[i % issued.length].team.id, { id: newId('fin'), status: 'paid' }, { status: 'pending' }),
  );
  const commandsBefore = await storeCommands(b.sys);
  const conn = await connect(b.bench.amqpUrl);
  try {
    const ch = await conn.createConfirmChannel();
    const loadBefore = snapshotLoad();
    const started = Date.now();
    for (const e of events) ch.publish(b.sys.tree.exchange, e.type, Buffer.from(JSON.stringify(e)), { persistent: true, contentType: 'application/json', messageId: e.id });
    await ch.waitForConfirms();
    const deadline = Date.now() + STEADY_PATIENCE_MS + 60_000;
    // Parsed as they come, so that counting costs the receiver (this process) little.
    const seen = new Set<string>();
    let parsed = 0;
    const distinct = () => {
      for (; parsed < receiver.requests.length; parsed++) {
        const body = bodyOf(receiver.requests[parsed]);
        if (body.type === 'financial.paid') seen.add(`${body.data?.object?.id} ${body.webhook_id}`);
      }
      return seen.size;
    };
    while (distinct() < CAPACITY_DELIVERIES && Date.now() < deadline) await sleep(50);
    const load = loadBetween(loadBefore, snapshotLoad());
    const last = Math.max(...receiver.requests.map((r) => r.at));
    const arrived = distinct();
    const perSecond: number[] = [];
    for (const r of receiver.requests) {
      const k = Math.max(0, Math.floor((r.at - started) / 1000));
      while (perSecond.length <= k) perSecond.push(0);
      perSecond[k]++;
    }
    console.log(`  capacity, POSTs arrived per second from the first publish: ${perSecond.join(' ')}; TLS connections accepted: ${receiver.connections}`);
    console.log(`  capacity, the machine from the first publish to the last arrival: ${describeLoad(load)}`);
    await webhooksSettled(b.bench.vhost, b.sys.tree.exchange);
    await sleep(2500);
    const commands = (await storeCommands(b.sys)) - commandsBefore;
    const seconds = (last - started) / 1000;
    const rate = arrived / seconds;
    console.log(
      `  capacity: ${arrived} of ${CAPACITY_DELIVERIES} deliveries (${events.length} events x ${CAPACITY_HOOKS} webhooks) in ${seconds.toFixed(1)} s: ` +
        `${rate.toFixed(0)} deliveries/s; ${commands} store commands (${(commands / Math.max(arrived, 1)).toFixed(2)} a delivery)`,
    );
    return { perSecond: rate, seconds, arrived, roundtripsPerDelivery: commands / Math.max(arrived, 1), load };
  } finally {
    await conn.close();
  }
}

export async function webhooksSection(b: Bench): Promise<void> {
  const sys = await b.system();
  console.log(
    `webhooks: POST /v1/clients through the gateway at ${STEADY_RATE}/s for ${STEADY_SECONDS} s per scenario (open loop), ` +
      `over ${WEBHOOK_TEAMS} new teams each with a webhook on client.created (the webhooks service's default timeout and limits)`,
  );
  const events = await createdEventCounter(b.amqpUrl, sys.tree.exchange);
  const store = await MongoClient.connect(b.store.url);
  const receivers: HttpsReceiver[] = [];
  try {
    const clients = store.db(`${sys.tree.dbPrefix}clients`).collection<{ _id: string }>('clients');
    const wb: WebhookBench = { bench: b, sys, events, clients, created: 0 };
    await webhooksSettled(b.vhost, sys.tree.exchange, 600_000);
    const figures: WebhookFigures[] = [];
    const steady = { rate: STEADY_RATE, hooksPerTeam: 1, seconds: STEADY_SECONDS };
    const scenarios: WebhookScenario[] = [
      { ...steady, key: 'warmup', name: `warm-up (${STEADY_WARMUP_SECONDS} s, no target), receiver answers at once`, delayMs: 0, withTimeout: false, seconds: STEADY_WARMUP_SECONDS },
      { ...steady, key: 'steady', name: `${STEADY_RATE} writes/s, receiver answers at once`, delayMs: 0, withTimeout: false },
      { ...steady, key: 'steady_slow', name: `${STEADY_RATE} writes/s, receiver answers after 50 ms`, delayMs: 50, withTimeout: false },
      { ...steady, key: 'steady_timeout', name: `${STEADY_RATE} writes/s, at once, beside a webhook per team that times out`, delayMs: 0, withTimeout: true },
      { ...steady, key: 'steady_200', name: `${2 * STEADY_RATE} writes/s, receiver answers at once`, rate: 2 * STEADY_RATE, delayMs: 0, withTimeout: false },
      {
        ...steady,
        key: 'fanout',
        name: `${FANOUT_RATE} writes/s, ${FANOUT_HOOKS} webhooks a team answering after 50 ms (${FANOUT_RATE * FANOUT_HOOKS} deliveries/s offered)`,
        rate: FANOUT_RATE,
        hooksPerTeam: FANOUT_HOOKS,
        delayMs: 50,
        withTimeout: false,
      },
    ];
    for (const [i, s] of scenarios.entries()) {
      if (s.seconds <= 0 || (WEBHOOK_SCENARIOS && !WEBHOOK_SCENARIOS.includes(s.key))) continue;
      const f = await webhookScenario(s, wb, i, receivers);
      figures.push(f);
      b.record(`webhooks.${s.key}.roundtrips_per_delivery`, f.roundtripsPerDelivery);
      if (s.key === 'fanout') b.record('webhooks.roundtrips_per_delivery', f.roundtripsPerDelivery);
      b.record(`webhooks.${s.key}.p50_ms`, f.p50);
      b.record(`webhooks.${s.key}.p99_ms`, f.p99);
      b.record(`webhooks.${s.key}.max_ms`, f.max);
      b.record(`webhooks.${s.key}.delivered_ratio`, f.arrived / Math.max(f.owed, 1));
      b.record(`webhooks.${s.key}.duplicates`, f.duplicates);
      b.record(`webhooks.${s.key}.max_backlog`, f.maxBacklog);
      b.record(`webhooks.${s.key}.deliveries_per_s`, f.perSecond);
      b.record(`webhooks.${s.key}.written`, f.written);
      b.record(`webhooks.${s.key}.write_errors`, f.writeErrors);
      b.record(`webhooks.${s.key}.write_p50_ms`, f.writeP50);
      b.record(`webhooks.${s.key}.write_p99_ms`, f.writeP99);
      b.record(`webhooks.${s.key}.write_roundtrips`, f.writeRoundtrips);
      recordLoad(b, `webhooks.${s.key}`, f.load);
    }
    if (!WEBHOOK_SCENARIOS || WEBHOOK_SCENARIOS.includes('capacity')) {
      const capacity = await capacityScenario(wb, receivers);
      b.record('webhooks.capacity.deliveries_per_s', capacity.perSecond);
      b.record('webhooks.capacity.seconds', capacity.seconds);
      b.record('webhooks.capacity.delivered_ratio', capacity.arrived / CAPACITY_DELIVERIES);
      b.record('webhooks.capacity.roundtrips_per_delivery', capacity.roundtripsPerDelivery);
      recordLoad(b, 'webhooks.capacity', capacity.load);
    }
    if (!WEBHOOK_SCENARIOS || WEBHOOK_SCENARIOS.includes('log')) {
      const receiver = await startHttpsReceiver(answerAfter(0));
      receivers.push(receiver);
      await deliveryLogScenario(b, sys, receiver.url);
    }
    printWebhookTable(figures);
    b.closing.push(() => printWebhookTable(figures));
  } finally {
    await Promise.all(receivers.map((r) => r.close()));
    await events.close();
    await store.close();
  }
}
