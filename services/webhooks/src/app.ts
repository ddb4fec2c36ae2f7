// The webhooks service as an app: no listening here (server.ts does that), so tests
// build it with their own store and neighbours.
import type { FastifyInstance } from 'fastify';
import { createServiceApp, type ServiceAppOptions } from '@lpm/shared/http/service-app';
import { WEBHOOK_DOCS } from './contract/webhook-operations.ts';
import type { DeliveryLog } from './domain/delivery-log.ts';
import type { Recoveries } from './domain/recoveries.ts';
import type { Webhooks } from './domain/webhooks.ts';
import { webhookRoutes } from './routes/webhooks.ts';

export interface WebhooksAppOptions extends Omit<ServiceAppOptions, 'name' | 'docs'> {
  webhooks: Webhooks;
  log: DeliveryLog;
  recoveries: Recoveries;
}

export function buildWebhooksApp(opts: WebhooksAppOptions): FastifyInstance {
  const app = createServiceApp({ ...opts, name: 'webhooks', docs: WEBHOOK_DOCS });
  app.register(async (scope) => webhookRoutes(scope, opts.webhooks, opts.log, opts.recoveries));
  return app;
}
