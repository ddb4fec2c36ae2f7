// Scenario `webhooks-cluster3`: what a three-node broker costs. The webhooks scenario's
// `fanout` and `capacity` again, on a system of this checkout whose broker is a
// RabbitMQ cluster of three nodes of the bench's own (scripts/cluster: every queue a
// quorum queue replicated on all three, each publish confirmed by a majority), beside
// the run's single node. Keys `webhooks.cluster3.<scenario>.*`, and each figure's
// ratio to the single node's when the `webhooks` scenario ran before in the same run
// (`..._vs_single`: above 1 is slower or more, for latencies and round trips; below 1
// fewer deliveries a second).
import { MongoClient } from 'mongodb';
import { clusterUrl, downCluster } from '../cluster/cluster.ts';
import { startPrivateCluster } from '../cluster/for-start.ts';
import { recordLoad } from './machine-load.ts';
import type { HttpsReceiver } from './internals.ts';
import { createdEventCounter, ratioOf, ROOT, type Bench, type Tree } from './support.ts';
import { webhookScenario, type WebhookBench } from './webhook-steady.ts';
import { STEADY_SECONDS, webhooksSettled } from './webhook-support.ts';
import { CAPACITY_DELIVERIES, FANOUT_HOOKS, FANOUT_RATE, capacityScenario } from './webhooks.ts';

const NODES = 3;
const TREE: Tree = { label: 'cluster3', root: ROOT, dbPrefix: 'bench_c3_', exchange: 'lpm.events' };

/** Records `webhooks.cluster3.<key>` and, when the single node's figure is there, its ratio to it. */
function recordBoth(b: Bench, key: string, value: number): void {
  b.record(`webhooks.cluster3.${key}`, value);
  const single = b.values[`webhooks.${key}`];
  if (single !== undefined) b.record(`webhooks.cluster3.${key}_vs_single`, ratioOf(value, single));
}

export async function webhooksClusterSection(b: Bench): Promise<void> {
  console.log(`webhooks-cluster3: the fanout and capacity scenarios on a RabbitMQ cluster of ${NODES} nodes`);
  const cluster = await startPrivateCluster(NODES, 'bench');
  const receivers: HttpsReceiver[] = [];
  try {
    const amqpUrl = clusterUrl(cluster);
    const sys = await b.start(TREE, { AMQP_URL: amqpUrl, AMQP_QUEUE_TYPE: 'quorum' });
    const events = await createdEventCounter(amqpUrl, TREE.exchange);
    const store = await MongoClient.connect(b.store.url);
    try {
      const clients = store.db(`${TREE.dbPrefix}clients`).collection<{ _id: string }>('clients');
      const view = { vhost: '/', node: cluster.nodes[0].node };
      const wb: WebhookBench = { bench: b, sys, events, clients, created: 0, broker: { amqpUrl, view } };
      await webhooksSettled(view, TREE.exchange, 600_000);
      const fanout = await webhookScenario(
        {
          key: 'cluster3.fanout',
          name: `cluster of ${NODES}: ${FANOUT_RATE} writes/s, ${FANOUT_HOOKS} webhooks a team answering after 50 ms`,
          rate: FANOUT_RATE,
          hooksPerTeam: FANOUT_HOOKS,
          delayMs: 50,
          withTimeout: false,
          seconds: STEADY_SECONDS,
        },
        wb,
        100,
        receivers,
      );
      recordBoth(b, 'fanout.p50_ms', fanout.p50);
      recordBoth(b, 'fanout.p99_ms', fanout.p99);
      recordBoth(b, 'fanout.max_ms', fanout.max);
      recordBoth(b, 'fanout.deliveries_per_s', fanout.perSecond);
      recordBoth(b, 'fanout.roundtrips_per_delivery', fanout.roundtripsPerDelivery);
      b.record('webhooks.cluster3.fanout.delivered_ratio', fanout.arrived / Math.max(fanout.owed, 1));
      b.record('webhooks.cluster3.fanout.duplicates', fanout.duplicates);
      recordLoad(b, 'webhooks.cluster3.fanout', fanout.load);
      const capacity = await capacityScenario(wb, receivers);
      recordBoth(b, 'capacity.deliveries_per_s', capacity.perSecond);
      recordBoth(b, 'capacity.seconds', capacity.seconds);
      recordBoth(b, 'capacity.roundtrips_per_delivery', capacity.roundtripsPerDelivery);
      b.record('webhooks.cluster3.capacity.delivered_ratio', capacity.arrived / CAPACITY_DELIVERIES);
      recordLoad(b, 'webhooks.cluster3.capacity', capacity.load);
    } finally {
      await events.close();
      await store.close();
      await sys.stop();
    }
  } finally {
    await Promise.all(receivers.map((r) => r.close()));
    await downCluster(cluster);
  }
}
