import type { ServiceRoutes } from '@lpm/shared/service/domain-app';
import { ok } from '@lpm/shared/http/envelope';
import { eventCatalog } from '@lpm/shared/webhook-catalog';
import { idParams } from '@lpm/shared/http/common-schemas';
import { pageOf, recordReadRoute, recordUpdateRoute } from '@lpm/shared/service/record-routes';
import type { DeliveryLog } from '../domain/delivery-log.ts';
import type { Recoveries } from '../domain/recoveries.ts';
import type { Webhooks } from '../domain/webhooks.ts';
import {
  createWebhookBody,
  deliveriesQuery,
  deliveryParams,
  recoverBody,
  recoveryParams,
  responses,
  rotateSecretBody,
  testSendBody,
  updateWebhookBody,
} from '../contract/webhook-schemas.ts';

export function webhookRoutes(
  app: ServiceRoutes,
  { webhooks, log, recoveries }: { webhooks: Webhooks; log: DeliveryLog; recoveries: Recoveries },
): void {
  app.get('/v1/webhooks', { schema: { response: responses.list } }, async (req) =>
    ok(await webhooks.list(req.identity)),
  );

  app.post('/v1/webhooks', { schema: { body: createWebhookBody, response: responses.created } }, async (req, reply) => {
    reply.status(201);
    return ok(await webhooks.create(req.identity, req.body));
  });

  // A fixed path: the router tries it before /v1/webhooks/:id.
  const catalog = eventCatalog();
  app.get('/v1/webhooks/event-types', { schema: { response: responses.eventTypes } }, async () => ok(catalog));

  recordReadRoute(app, '/v1/webhooks/:id', webhooks, responses.one);

  app.post(
    '/v1/webhooks/:id/secret/rotate',
    { schema: { params: idParams, body: rotateSecretBody, response: responses.rotated } },
    async (req) => ok(await webhooks.rotateSecret(req.identity, req.params.id, req.body)),
  );

  recordUpdateRoute(app, '/v1/webhooks/:id', webhooks, updateWebhookBody, responses.updated);

  app.delete('/v1/webhooks/:id', { schema: { params: idParams, response: responses.deleted } }, async (req) =>
    ok(await webhooks.remove(req.identity, req.params.id)),
  );

  app.get(
    '/v1/webhooks/:id/deliveries',
    { schema: { params: idParams, querystring: deliveriesQuery, response: responses.deliveries } },
    async (req) => pageOf(req.query, await log.list(req.identity, req.params.id, req.query)),
  );

  app.post(
    '/v1/webhooks/:id/deliveries/:delivery_id/retry',
    { schema: { params: deliveryParams, response: responses.retried } },
    async (req) => ok(await log.retry(req.identity, req.params.id, req.params.delivery_id)),
  );

  app.post(
    '/v1/webhooks/:id/test',
    { schema: { params: idParams, body: testSendBody, response: responses.testQueued } },
    async (req, reply) => {
      reply.status(202);
      return ok(await log.sendTest(req.identity, req.params.id, req.body.event));
    },
  );

  app.post(
    '/v1/webhooks/:id/recover',
    { schema: { params: idParams, body: recoverBody, response: responses.recovering } },
    async (req, reply) => {
      reply.status(202);
      return ok(await recoveries.start(req.identity, req.params.id, req.body));
    },
  );

  app.get(
    '/v1/webhooks/:id/recoveries/:recovery_id',
    { schema: { params: recoveryParams, response: responses.recovery } },
    async (req) => ok(await recoveries.get(req.identity, req.params.id, req.params.recovery_id)),
  );
}
