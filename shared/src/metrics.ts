// The process's metrics (prom-client), served at /metrics on an internal listener
// (http/request-metrics.ts): a service's own port, the gateway's INTERNAL_PORT.
// Labels stay bounded: names of services, routes, collections, commands and
// queues, never ids or URLs.
import type { MongoClient } from 'mongodb';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { countCommand } from './counted-requests.ts';

export const metrics = new Registry();

/** Few buckets: each is a counter every observation adds to. */
export const LATENCY_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5];

/**
 * Once per process, at its start: the process's default metrics (CPU, memory, event
 * loop lag, GC) and a `service` label on every series it serves.
 */
export function startProcessMetrics(service: string): void {
  metrics.setDefaultLabels({ service });
  collectDefaultMetrics({ register: metrics });
}

const storeCommands = new Counter({
  name: 'store_commands_total',
  help: 'Commands sent to the store (round trips), by collection and command',
  labelNames: ['collection', 'command'] as const,
  registers: [metrics],
});

const storeDuration = new Histogram({
  name: 'store_operation_duration_seconds',
  help: 'Time from sending a command to the store to its answer, by collection and command (op)',
  labelNames: ['collection', 'op'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [metrics],
});

/** Counts and times every command the client sends (the client must be made with `monitorCommands: true`), and counts it for its request when that request asked (counted-requests.ts). */
export function countStoreCommands(client: MongoClient): void {
  // The started event names the collection, the answer only the request id.
  const collectionOf = new Map<number, string>();
  client.on('commandStarted', (e) => {
    const target: unknown = e.commandName === 'getMore' ? e.command.collection : e.command[e.commandName];
    const collection = typeof target === 'string' ? target : '';
    storeCommands.inc({ command: e.commandName, collection });
    countCommand(e.commandName, collection);
    collectionOf.set(e.requestId, collection);
  });
  const answered = (e: { requestId: number; commandName: string; duration: number }) => {
    const collection = collectionOf.get(e.requestId);
    if (collection === undefined) return;
    collectionOf.delete(e.requestId);
    storeDuration.observe({ collection, op: e.commandName }, e.duration / 1000);
  };
  client.on('commandSucceeded', answered);
  client.on('commandFailed', answered);
}

/** How long a scrape waits for what a gauge reads from the store or the broker; past it the gauge stays as last read. */
export const SCRAPE_READ_TIMEOUT_MS = 2000;

/**
 * A gauge's collect that reads with `read`: gauges sharing it share one read per
 * scrape, and a scrape waits for it at most SCRAPE_READ_TIMEOUT_MS.
 */
export function scrapeRead(read: () => Promise<void>): () => Promise<void> {
  let reading: Promise<void> | null = null;
  return () => {
    reading ??= Promise.race([
      read().catch(() => {}),
      new Promise<void>((resolve) => setTimeout(resolve, SCRAPE_READ_TIMEOUT_MS).unref()),
    ]).finally(() => (reading = null));
    return reading;
  };
}
