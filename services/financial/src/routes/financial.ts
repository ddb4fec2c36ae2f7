import type { FastifyInstance } from 'fastify';
import { ok, page } from '@lpm/shared/http/envelope';
import { pagination } from '@lpm/shared/http/pagination';
import type { SchemaTypes } from '@lpm/shared/http/schemas';
import { idParams } from '@lpm/shared/http/common-schemas';
import type { Financial } from '../domain/financial.ts';
import {
  createFinancialBody,
  listFinancialQuery,
  overdueQuery,
  responses,
  summaryQuery,
  updateFinancialBody,
} from '../contract/financial-schemas.ts';

export function financialRoutes(fastify: FastifyInstance, financial: Financial): void {
  const app = fastify.withTypeProvider<SchemaTypes>();

  app.get('/v1/financial', { schema: { querystring: listFinancialQuery, response: responses.list } }, async (req) => {
    const { items, total } = await financial.list(req.identity, req.query);
    return page(items, pagination(req.query, total));
  });

  app.post(
    '/v1/financial',
    { schema: { body: createFinancialBody, response: responses.created } },
    async (req, reply) => {
      reply.status(201);
      return ok(await financial.create(req.identity, req.body));
    },
  );

  // Static paths before /:id (find-my-way prefers them anyway).
  app.get(
    '/v1/financial/summary',
    { schema: { querystring: summaryQuery, response: responses.summary } },
    async (req) => ok(await financial.summary(req.identity, req.query)),
  );

  app.get(
    '/v1/financial/overdue',
    { schema: { querystring: overdueQuery, response: responses.overdue } },
    async (req) => {
      const { items, total } = await financial.overdue(req.identity, req.query);
      return page(items, pagination(req.query, total));
    },
  );

  app.get('/v1/financial/:id', { schema: { params: idParams, response: responses.detail } }, async (req) =>
    ok(await financial.get(req.identity, req.params.id)),
  );

  app.put(
    '/v1/financial/:id',
    { schema: { params: idParams, body: updateFinancialBody, response: responses.updated } },
    async (req) => ok(await financial.update(req.identity, req.params.id, req.body)),
  );

  app.delete('/v1/financial/:id', { schema: { params: idParams, response: responses.cancelled } }, async (req) =>
    ok(await financial.cancel(req.identity, req.params.id)),
  );
}
