import type { FastifyInstance } from 'fastify';
import { ok, page } from '@lpm/shared/http/envelope';
import { pagination, type ListQuery } from '@lpm/shared/http/pagination';
import type { DeliveryLog } from '../domain/delivery-log.ts';
import type { Webhooks } from '../domain/webhooks.ts';
import { createWebhookBody, deliveriesQuery, deliveryParams, responses, updateWebhookBody, webhookIdParams } from './webhook-schemas.ts';

type Body = Record<string, unknown>;
type IdParams = { id: string };

export function webhookRoutes(app: FastifyInstance, webhooks: Webhooks, log: DeliveryLog): void {
  app.get('/v1/webhooks', { schema: { response: responses.list } }, async (req) => ok(await webhooks.list(req.identity)));

  app.post<{ Body: Body }>('/v1/webhooks', { schema: { body: createWebhookBody, response: responses.created } }, async (req, reply) => {
    reply.status(201);
    return ok(await webhooks.create(req.identity, req.body));
  });

  app.put<{ Params: IdParams; Body: Body }>(
    '/v1/webhooks/:id',
    { schema: { params: webhookIdParams, body: updateWebhookBody, response: responses.updated } },
    async (req) => ok(await webhooks.update(req.identity, req.params.id, req.body)),
  );

  app.delete<{ Params: IdParams }>('/v1/webhooks/:id', { schema: { params: webhookIdParams, response: responses.deleted } }, async (req) =>
    ok(await webhooks.remove(req.identity, req.params.id)),
  );

  app.get<{ Params: IdParams; Querystring: ListQuery }>(
    '/v1/webhooks/:id/deliveries',
    { schema: { params: webhookIdParams, querystring: deliveriesQuery, response: responses.deliveries } },
    async (req) => {
      const { items, total } = await log.list(req.identity, req.params.id, req.query);
      return page(items, pagination(req.query, total));
    },
  );

  app.post<{ Params: { id: string; delivery_id: string } }>(
    '/v1/webhooks/:id/deliveries/:delivery_id/retry',
    { schema: { params: deliveryParams, response: responses.retried } },
    async (req) => ok(await log.retry(req.identity, req.params.id, req.params.delivery_id)),
  );
}
