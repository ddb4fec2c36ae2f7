// The gateway's own metrics beside the shared ones (requests by route, the store,
// the process): refusals of the rate limits and of authentication, and how long
// each upstream service takes to answer.
import { Counter } from 'prom-client';
import { metrics } from '@lpm/shared/metrics';
import { latencyHistogram } from '@lpm/shared/metric-makers';
import type { ServiceName } from '@lpm/shared/service/names';

export const rateLimitRefusals = new Counter({
  name: 'gateway_rate_limit_refusals_total',
  help: "Requests refused (429) by their team's rate limits, by the team's plan",
  labelNames: ['plan'] as const,
  registers: [metrics],
});

export const authFailures = new Counter({
  name: 'gateway_auth_failures_total',
  help: 'Failed authentications, by reason: missing or invalid (an API key, 401), internal_token (a wrong internal credential at /internal/*)',
  labelNames: ['reason'] as const,
  registers: [metrics],
});

export const authThrottles = new Counter({
  name: 'gateway_auth_throttles_total',
  help: 'Requests refused (429) because their client address is past its failed authentications (AUTH_FAILURE_LIMIT)',
  registers: [metrics],
});

export const publicThrottles = new Counter({
  name: 'gateway_public_throttles_total',
  help: 'Requests to the routes served without a key refused (429) because their client address is past PUBLIC_RATE_LIMIT',
  registers: [metrics],
});

const upstreamDuration = latencyHistogram(
  'gateway_upstream_duration_seconds',
  "Time from a proxied request sent to a service to the service's response headers, by service",
  ['service'],
);

/** Observes one service's answer times in seconds (bound once per service). */
export function upstreamTimer(service: ServiceName): (seconds: number) => void {
  const child = upstreamDuration.labels({ service });
  return (seconds) => child.observe(seconds);
}
