// The kinds of metric several modules declare alike, registered with the process's
// metrics (metrics.ts).
import { Gauge, Histogram } from 'prom-client';
import { LATENCY_BUCKETS, metrics } from './metrics.ts';

/** Durations in seconds, by `labelNames`, in the few LATENCY_BUCKETS. */
export function latencyHistogram<L extends string>(name: string, help: string, labelNames: readonly L[]): Histogram<L> {
  return new Histogram({ name, help, labelNames, buckets: LATENCY_BUCKETS, registers: [metrics] });
}

/** A gauge by `labelNames` that `read` sets at each scrape (one read may set several gauges). */
export function scrapedGauge<L extends string>(
  name: string,
  help: string,
  labelNames: readonly L[],
  read: () => Promise<void>,
): Gauge<L> {
  return new Gauge({ name, help, labelNames, registers: [metrics], collect: () => read() });
}
