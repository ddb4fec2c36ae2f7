// Scenario `webhooks`: client.created delivered to local HTTPS receivers while clients
// are written through the gateway at a steady rate (STEADY_RATE a second for
// STEADY_SECONDS, open loop), in three sub-scenarios: receivers answering at once
// (`steady`), after 50 ms (`steady_slow`), and at once beside a webhook per team whose
// receiver never answers (`steady_timeout`). A warm-up like `steady` but shorter
// (STEADY_WARMUP_SECONDS, reported as `warmup`) comes first: on a system just
// started, its JIT, pools and caches are still cold. Figures: the time from the write's
// response to the delivery's arrival, the share delivered, and the relay's backlog
// (clients with `outbox_pending`, sampled each second). On this checkout's system,
// after the clients runs and before the cases are stored (whose SLA sweeps would slow
// every store write of a delivery). Each scenario starts once the relay has emptied
// what the runs before left flagged, so it measures a steady state, not a recovery.
import { MongoClient, type Collection } from 'mongodb';
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
 * before were answered or not, round robin over the teams. Latency: from the instant
 * a POST's response was read to the instant the receiver had the body of that
 * client's client.created delivery (both Date.now() in this process).
 */
async function webhookScenario(s: WebhookScenario, b: WebhookBench, index: number, receivers: HttpsReceiver[]): Promise<WebhookFigures> {
  const healthy = await startHttpsReceiver(answerAfter(s.delayMs));
  receivers.push(healthy);
  const hanging = s.withTimeout ? await startHttpsReceiver(neverAnswer) : undefined;
  if (hanging) receivers.push(hanging);

  const issued = await createTeams(b.bench, b.sys.tree, Array.from({ length: WEBHOOK_TEAMS }, (_, n) => `Bench webhooks ${index}.${n}`));
  const keys = issued.map((t) => t.api_key);
  const hookIds = { healthy: [] as string[], hanging: [] as string[] };
  for (const [n, key] of keys.entries()) {
    for (const [kind, receiver] of [['healthy', healthy], ['hanging', hanging]] as const) {
      if (!receiver) continue;
      const res = await fetch(`${b.sys.gatewayUrl}/v1/webhooks`, {
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
        backlog.push(await b.clients.countDocuments({ outbox_pending: true }));
        await sleep(1000);
      }
    })(),
  ]);
  const answered = new Map<string, number>();
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
      if (res.status === 201 && body.data) answered.set(body.data.id, Date.now());
      else writeErrors++;
    } catch {
      writeErrors++;
    }
  };
  const total = Math.round(STEADY_RATE * s.seconds);
  const writes: Promise<void>[] = [];
  const writesStarted = performance.now();
  for (let i = 0; i < total; i++) {
    const wait = writesStarted + (i * 1000) / STEADY_RATE - performance.now();
    if (wait > 0) await sleep(wait);
    writes.push(write(i));
  }
  const sendSeconds = (performance.now() - writesStarted) / 1000;
  await Promise.all(writes);
  b.created += answered.size;
  const deadline = Date.now() + STEADY_PATIENCE_MS;
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
  await webhooksSettled(b.bench.vhost, b.sys.tree.exchange);
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
  writeTimes.sort((x, y) => x - y);
  const figures: WebhookFigures = {
    name: s.name,
    written: answered.size,
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
  };
  const since = (t: number) => `+${((t - firstAnswer) / 1000).toFixed(1)} s`;
  console.log(
    `  ${s.name}: ${total} writes sent in ${sendSeconds.toFixed(1)} s, ${answered.size} answered 201 (p50 ${figures.writeP50.toFixed(0)} ms, p99 ${figures.writeP99.toFixed(0)} ms)` +
      `${writeErrors ? `, ${writeErrors} refused or failed` : ''}; ` +
      `last event published by the relay ${lastPublished ? since(lastPublished) : 'not seen'}, last delivery arrived ${since(lastArrival)} ` +
      `(times from the first write's response)`,
  );
  console.log(
    `  ${s.name}: ${arrived} of ${answered.size} delivered${arrived < answered.size ? ` (${answered.size - arrived} missing ${STEADY_PATIENCE_MS / 1000} s after the last write)` : ''}, ` +
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
  console.log(
    `  ${s.name}, per second: writes answered ${perSecond([...answered.values()])} | events published ${perSecond(publishedAt)} | ` +
      `deliveries arrived ${perSecond(firstArrivals)} | relay backlog (a count each second or as fast as the store answers) ${backlog.join(' ')}`,
  );
  if (hanging) await reportTimeouts(s.name, b.bench.store.url, `${b.sys.tree.dbPrefix}webhooks`, hookIds.hanging, hanging, firstAnswer);
  return figures;
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
    const scenarios: WebhookScenario[] = [
      { key: 'warmup', name: `warm-up (${STEADY_WARMUP_SECONDS} s, no target), receiver answers at once`, delayMs: 0, withTimeout: false, seconds: STEADY_WARMUP_SECONDS },
      { key: 'steady', name: 'receiver answers at once', delayMs: 0, withTimeout: false, seconds: STEADY_SECONDS },
      { key: 'steady_slow', name: 'receiver answers after 50 ms', delayMs: 50, withTimeout: false, seconds: STEADY_SECONDS },
      { key: 'steady_timeout', name: 'at once, beside a webhook per team that times out', delayMs: 0, withTimeout: true, seconds: STEADY_SECONDS },
    ];
    for (const [i, s] of scenarios.entries()) {
      if (s.seconds <= 0) continue;
      const f = await webhookScenario(s, wb, i, receivers);
      figures.push(f);
      b.record(`webhooks.${s.key}.p50_ms`, f.p50);
      b.record(`webhooks.${s.key}.p99_ms`, f.p99);
      b.record(`webhooks.${s.key}.max_ms`, f.max);
      b.record(`webhooks.${s.key}.delivered_ratio`, f.arrived / Math.max(f.written, 1));
      b.record(`webhooks.${s.key}.duplicates`, f.duplicates);
      b.record(`webhooks.${s.key}.max_backlog`, f.maxBacklog);
      b.record(`webhooks.${s.key}.deliveries_per_s`, f.perSecond);
      b.record(`webhooks.${s.key}.written`, f.written);
      b.record(`webhooks.${s.key}.write_errors`, f.writeErrors);
      b.record(`webhooks.${s.key}.write_p50_ms`, f.writeP50);
      b.record(`webhooks.${s.key}.write_p99_ms`, f.writeP99);
    }
    printWebhookTable(figures);
    b.closing.push(() => printWebhookTable(figures));
  } finally {
    await Promise.all(receivers.map((r) => r.close()));
    await events.close();
    await store.close();
  }
}
