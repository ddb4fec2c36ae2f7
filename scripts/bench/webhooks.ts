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
import { connectToAnyNode } from '../../shared/src/messaging/nodes.ts';
import { MongoClient } from 'mongodb';
import { newEvent } from '../../shared/src/events.ts';
import { newId } from '../../shared/src/ids.ts';
import { deliveryLogScenario } from './delivery-log.ts';
import { describeLoad, loadBetween, recordLoad, snapshotLoad, type MachineLoad } from './machine-load.ts';
import { startHttpsReceiver, type HttpsReceiver } from './internals.ts';
import { createdEventCounter, sleep, type Bench } from './support.ts';
import { createTeams } from './teams.ts';
import { webhookScenario, type WebhookBench, type WebhookScenario } from './webhook-steady.ts';
import {
  STEADY_PATIENCE_MS,
  STEADY_RATE,
  STEADY_SECONDS,
  STEADY_WARMUP_SECONDS,
  WEBHOOK_TEAMS,
  answerAfter,
  storeCommands,
  subscribeHooks,
  bodyOf,
  printWebhookTable,
  webhooksSettled,
  type WebhookFigures,
} from './webhook-support.ts';

/** BENCH_WEBHOOK_SCENARIOS: the scenarios to run (their keys, comma-separated); unset: all. */
const WEBHOOK_SCENARIOS = process.env.BENCH_WEBHOOK_SCENARIOS?.split(',').map((k) => k.trim());
/** The fan-out scenario: writes a second, and webhooks a team on client.created. */
export const FANOUT_RATE = 50;
export const FANOUT_HOOKS = 20;
/** fanout_throttled: the rate_limit of the one more webhook beside the fan-out. */
const THROTTLED_RATE = 5;
/** The capacity scenario's deliveries: CAPACITY_HOOKS webhooks on each of WEBHOOK_TEAMS teams. */
export const CAPACITY_DELIVERIES = 10_000;
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
export async function capacityScenario(
  b: WebhookBench,
  receivers: HttpsReceiver[],
): Promise<{ perSecond: number; seconds: number; arrived: number; roundtripsPerDelivery: number; load: MachineLoad }> {
  const receiver = await startHttpsReceiver(answerAfter(0));
  receivers.push(receiver);
  const issued = await createTeams(
    b.bench,
    b.sys.tree,
    Array.from({ length: WEBHOOK_TEAMS }, (_, n) => `Bench webhooks capacity ${n}`),
  );
  for (const [n, t] of issued.entries()) {
    await subscribeHooks(
      b.sys.gatewayUrl,
      t.api_key,
      Array.from({ length: CAPACITY_HOOKS }, (_, k) => `${receiver.url}/capacity-${n}/hook-${k}`),
      ['financial.paid'],
    );
  }
  const events = Array.from({ length: CAPACITY_DELIVERIES / CAPACITY_HOOKS }, (_, i) =>
    newEvent(
      'financial.paid',
      issued[i % issued.length].team.id,
      { id: newId('fin'), status: 'paid' },
      { status: 'pending' },
    ),
  );
  const commandsBefore = await storeCommands(b.sys);
  const conn = await connectToAnyNode(b.broker?.amqpUrl ?? b.bench.amqpUrl);
  try {
    const ch = await conn.createConfirmChannel();
    const loadBefore = snapshotLoad();
    const started = Date.now();
    for (const e of events)
      ch.publish(b.sys.tree.exchange, e.type, Buffer.from(JSON.stringify(e)), {
        persistent: true,
        contentType: 'application/json',
        messageId: e.id,
      });
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
    console.log(
      `  capacity, POSTs arrived per second from the first publish: ${perSecond.join(' ')}; TLS connections accepted: ${receiver.connections}`,
    );
    console.log(`  capacity, the machine from the first publish to the last arrival: ${describeLoad(load)}`);
    await webhooksSettled(b.broker?.view ?? b.bench.vhost, b.sys.tree.exchange);
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

/** The scenarios of the section, in their order. */
function webhookScenarios(): WebhookScenario[] {
  const steady = { rate: STEADY_RATE, hooksPerTeam: 1, seconds: STEADY_SECONDS };
  return [
    {
      ...steady,
      key: 'warmup',
      name: `warm-up (${STEADY_WARMUP_SECONDS} s, no target), receiver answers at once`,
      delayMs: 0,
      withTimeout: false,
      seconds: STEADY_WARMUP_SECONDS,
    },
    {
      ...steady,
      key: 'steady',
      name: `${STEADY_RATE} writes/s, receiver answers at once`,
      delayMs: 0,
      withTimeout: false,
    },
    {
      ...steady,
      key: 'steady_slow',
      name: `${STEADY_RATE} writes/s, receiver answers after 50 ms`,
      delayMs: 50,
      withTimeout: false,
    },
    {
      ...steady,
      key: 'steady_timeout',
      name: `${STEADY_RATE} writes/s, at once, beside a webhook per team that times out`,
      delayMs: 0,
      withTimeout: true,
    },
    {
      ...steady,
      key: 'steady_200',
      name: `${2 * STEADY_RATE} writes/s, receiver answers at once`,
      rate: 2 * STEADY_RATE,
      delayMs: 0,
      withTimeout: false,
    },
    {
      ...steady,
      key: 'fanout',
      name: `${FANOUT_RATE} writes/s, ${FANOUT_HOOKS} webhooks a team answering after 50 ms (${FANOUT_RATE * FANOUT_HOOKS} deliveries/s offered)`,
      rate: FANOUT_RATE,
      hooksPerTeam: FANOUT_HOOKS,
      delayMs: 50,
      withTimeout: false,
    },
    {
      ...steady,
      key: 'fanout_throttled',
      name: `fanout beside one webhook limited to ${THROTTLED_RATE} deliveries/s`,
      rate: FANOUT_RATE,
      hooksPerTeam: FANOUT_HOOKS,
      delayMs: 50,
      withTimeout: false,
      throttled: THROTTLED_RATE,
    },
  ];
}

/** The figures of one scenario, under `webhooks.<key>.*`. */
function recordScenario(b: Bench, key: string, f: WebhookFigures): void {
  b.record(`webhooks.${key}.roundtrips_per_delivery`, f.roundtripsPerDelivery);
  if (key === 'fanout') b.record('webhooks.roundtrips_per_delivery', f.roundtripsPerDelivery);
  b.record(`webhooks.${key}.p50_ms`, f.p50);
  b.record(`webhooks.${key}.p99_ms`, f.p99);
  b.record(`webhooks.${key}.max_ms`, f.max);
  b.record(`webhooks.${key}.delivered_ratio`, f.arrived / Math.max(f.owed, 1));
  b.record(`webhooks.${key}.duplicates`, f.duplicates);
  b.record(`webhooks.${key}.max_backlog`, f.maxBacklog);
  b.record(`webhooks.${key}.deliveries_per_s`, f.perSecond);
  b.record(`webhooks.${key}.written`, f.written);
  b.record(`webhooks.${key}.write_errors`, f.writeErrors);
  b.record(`webhooks.${key}.write_p50_ms`, f.writeP50);
  b.record(`webhooks.${key}.write_p99_ms`, f.writeP99);
  b.record(`webhooks.${key}.write_roundtrips`, f.writeRoundtrips);
  recordLoad(b, `webhooks.${key}`, f.load);
  if (f.throttled) {
    b.record(`webhooks.${key}.throttled_delivered_ratio`, f.throttled.arrived / Math.max(f.throttled.owed, 1));
    b.record(`webhooks.${key}.throttled_busiest_second`, f.throttled.busiestSecond);
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
    const scenarios = webhookScenarios();
    for (const [i, s] of scenarios.entries()) {
      if (s.seconds <= 0 || (WEBHOOK_SCENARIOS && !WEBHOOK_SCENARIOS.includes(s.key))) continue;
      const f = await webhookScenario(s, wb, i, receivers);
      figures.push(f);
      recordScenario(b, s.key, f);
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
