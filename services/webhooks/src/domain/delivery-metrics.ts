// The webhooks service's metrics: every attempt by its outcome, the time from an
// event's creation to its receiver's 2xx, and the webhooks deactivated after
// consecutive failures. Labels: the outcome only (succeeded, or the error class).
import { Counter, Histogram } from 'prom-client';
import { idTime } from '@lpm/shared/ids';
import { metrics } from '@lpm/shared/metrics';
import type { SendResult } from '../upstream/webhook-sender.ts';

const attempts = new Counter({
  name: 'webhook_delivery_attempts_total',
  help: 'Delivery attempts (POSTs), by outcome: succeeded, or the error class (timeout, http_5xx, ...)',
  labelNames: ['outcome'] as const,
  registers: [metrics],
});

const latency = new Histogram({
  name: 'webhook_delivery_latency_seconds',
  help: "Time from an event's created_at to its receiver's 2xx, whichever attempt got it",
  // Retries run for a day and more (WEBHOOK_RETRY_DELAYS).
  buckets: [0.25, 1, 5, 30, 300, 3600, 43_200, 172_800],
  registers: [metrics],
});

export const endpointsDisabled = new Counter({
  name: 'webhook_endpoints_disabled_total',
  help: 'Webhooks made inactive after consecutive failed attempts',
  registers: [metrics],
});

/** Counts an attempt of the delivery `deliveryId` (an id derived from its event's created_at: newDelivery in delivery-records.ts). */
export function countAttempt(deliveryId: string, result: SendResult): void {
  attempts.inc({ outcome: result.ok ? 'succeeded' : (result.errorClass ?? 'failed') });
  if (result.ok) latency.observe(Math.max(0, Date.now() - idTime(deliveryId)) / 1000);
}
