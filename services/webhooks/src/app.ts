import type { FastifyInstance } from 'fastify';
import { buildServiceApp, type DomainAppOptions } from '@lpm/shared/service/domain-app';
import { WEBHOOK_DOCS } from './contract/webhook-operations.ts';
import type { DeliveryLog } from './domain/delivery-log.ts';
import type { Recoveries } from './domain/recoveries.ts';
import type { Webhooks } from './domain/webhooks.ts';
import { webhookRoutes } from './routes/webhooks.ts';

export interface WebhooksAppOptions extends DomainAppOptions {
  webhooks: Webhooks;
  log: DeliveryLog;
  recoveries: Recoveries;
}

export function buildWebhooksApp(opts: WebhooksAppOptions): FastifyInstance {
  return buildServiceApp('webhooks', WEBHOOK_DOCS, opts, [webhookRoutes]);
}
