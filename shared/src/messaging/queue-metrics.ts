// The consumers' metrics: each message's outcome, and, asked of the broker at each
// scrape, the depth of every consumer's queue, its retry and delay queues and its
// dead-letter queue, and how many consumers its queue has. Replicas of a service
// report the same queues: aggregate them with max, not sum.
import { Counter } from 'prom-client';
import { metrics, scrapeRead } from '../metrics.ts';
import { scrapedGauge } from '../metric-makers.ts';
import type { QueueDepth } from './queue-types.ts';

export type MessageOutcome = 'acked' | 'retried' | 'dead_lettered';

const messages = new Counter({
  name: 'consumer_messages_total',
  help: 'Messages a consumer took, by queue and outcome: acked (handled, or a duplicate), retried (through its retry or a delay queue), dead_lettered',
  labelNames: ['queue', 'outcome'] as const,
  registers: [metrics],
});

const sources: (() => Promise<QueueDepth[] | null>)[] = [];
const readDepths = scrapeRead(readAll);

const depth = scrapedGauge(
  'consumer_queue_messages',
  "Messages waiting in a consumer's queues, by queue and kind: main, retry, delay (all its delay queues), dlq",
  ['queue', 'kind'],
  readDepths,
);
const consumers = scrapedGauge(
  'consumer_queue_consumers',
  "Consumers attached to a consumer's queue (over all replicas), by queue",
  ['queue'],
  readDepths,
);

export function countMessage(queue: string, outcome: MessageOutcome): void {
  messages.inc({ queue, outcome });
}

/** Serves the depths `read` gives (Broker.queueDepths) at each scrape. */
export function watchQueues(read: () => Promise<QueueDepth[] | null>): void {
  sources.push(read);
}

async function readAll(): Promise<void> {
  const answers = await Promise.all(sources.map((source) => source().catch(() => null)));
  // Disconnected: the figures stay as last read. Otherwise they are replaced, so a consumer cancelled is no longer reported.
  if (answers.includes(null)) return;
  const read = answers.flatMap((a) => a ?? []);
  const waiting = new Map<string, { queue: string; kind: string; messages: number }>();
  depth.reset();
  consumers.reset();
  for (const d of read) {
    const key = `${d.queue}\u0000${d.kind}`;
    const sum = waiting.get(key) ?? { queue: d.queue, kind: d.kind, messages: 0 };
    sum.messages += d.messages;
    waiting.set(key, sum);
    if (d.kind === 'main') consumers.set({ queue: d.queue }, d.consumers);
  }
  for (const { queue, kind, messages } of waiting.values()) depth.set({ queue, kind }, messages);
}
