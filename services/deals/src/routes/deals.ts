import type { FastifyInstance } from 'fastify';
import { ok, page } from '@lpm/shared/http/envelope';
import { pagination } from '@lpm/shared/http/pagination';
import type { SchemaTypes } from '@lpm/shared/http/schemas';
import { idParams } from '@lpm/shared/http/common-schemas';
import type { Deals } from '../domain/deals.ts';
import {
  createDealBody,
  listDealsQuery,
  lostBody,
  phaseBody,
  responses,
  summaryQuery,
  updateDealBody,
  wonBody,
} from '../contract/deal-schemas.ts';

export function dealRoutes(fastify: FastifyInstance, deals: Deals): void {
  const app = fastify.withTypeProvider<SchemaTypes>();

  app.get('/v1/deals', { schema: { querystring: listDealsQuery, response: responses.list } }, async (req) => {
    const { items, total } = await deals.list(req.identity, req.query);
    return page(items, pagination(req.query, total));
  });

  app.post('/v1/deals', { schema: { body: createDealBody, response: responses.created } }, async (req, reply) => {
    reply.status(201);
    return ok(await deals.create(req.identity, req.body));
  });

  // Before /v1/deals/:id, which would otherwise take "summary" for an id.
  app.get('/v1/deals/summary', { schema: { querystring: summaryQuery, response: responses.summary } }, async (req) =>
    ok(await deals.summary(req.identity, req.query)),
  );

  app.get('/v1/deals/:id', { schema: { params: idParams, response: responses.detail } }, async (req) =>
    ok(await deals.get(req.identity, req.params.id)),
  );

  app.put(
    '/v1/deals/:id',
    { schema: { params: idParams, body: updateDealBody, response: responses.updated } },
    async (req) => ok(await deals.update(req.identity, req.params.id, req.body)),
  );

  app.put(
    '/v1/deals/:id/phase',
    { schema: { params: idParams, body: phaseBody, response: responses.phase } },
    async (req) => ok(await deals.movePhase(req.identity, req.params.id, req.body)),
  );

  app.put('/v1/deals/:id/won', { schema: { params: idParams, body: wonBody, response: responses.won } }, async (req) =>
    ok(await deals.won(req.identity, req.params.id, req.body)),
  );

  app.put(
    '/v1/deals/:id/lost',
    { schema: { params: idParams, body: lostBody, response: responses.lost } },
    async (req) => ok(await deals.lost(req.identity, req.params.id, req.body)),
  );

  app.delete('/v1/deals/:id', { schema: { params: idParams, response: responses.archived } }, async (req) =>
    ok(await deals.archive(req.identity, req.params.id)),
  );
}
