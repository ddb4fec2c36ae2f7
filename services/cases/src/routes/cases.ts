import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ok, page } from '@lpm/shared/http/envelope';
import { pagination } from '@lpm/shared/http/pagination';
import type { SchemaTypes } from '@lpm/shared/http/schemas';
import { idParams } from '@lpm/shared/http/common-schemas';
import { RESERVED_KEY_PREFIX, reservedIdempotencyKey } from '../contract/case-errors.ts';
import type { Cases } from '../domain/cases.ts';
import {
  caseActivitiesQuery,
  createCaseBody,
  listCasesQuery,
  responses,
  timelineQuery,
  updateCaseBody,
} from '../contract/case-schemas.ts';

/** Before the Idempotency-Key is taken (preValidation): a key with the reserved prefix is 400. */
async function refuseReservedKey(req: FastifyRequest): Promise<void> {
  const key = req.headers['idempotency-key'];
  if ((Array.isArray(key) ? key : [key]).some((k) => k?.startsWith(RESERVED_KEY_PREFIX)))
    throw reservedIdempotencyKey();
}

export function caseRoutes(fastify: FastifyInstance, cases: Cases): void {
  const app = fastify.withTypeProvider<SchemaTypes>();

  app.get('/v1/cases', { schema: { querystring: listCasesQuery, response: responses.list } }, async (req) => {
    const { items, total } = await cases.list(req.identity, req.query);
    return page(items, pagination(req.query, total));
  });

  app.post(
    '/v1/cases',
    { onRequest: refuseReservedKey, schema: { body: createCaseBody, response: responses.created } },
    async (req, reply) => {
      reply.status(201);
      return ok(await cases.create(req.identity, req.body));
    },
  );

  app.get('/v1/cases/:id', { schema: { params: idParams, response: responses.detail } }, async (req) =>
    ok(await cases.get(req.identity, req.params.id)),
  );

  app.put(
    '/v1/cases/:id',
    { schema: { params: idParams, body: updateCaseBody, response: responses.updated } },
    async (req) => ok(await cases.update(req.identity, req.params.id, req.body)),
  );

  app.delete('/v1/cases/:id', { schema: { params: idParams, response: responses.archived } }, async (req) =>
    ok(await cases.archive(req.identity, req.params.id)),
  );

  app.get(
    '/v1/cases/:id/timeline',
    { schema: { params: idParams, querystring: timelineQuery, response: responses.timeline } },
    async (req) => ok(await cases.timeline(req.identity, req.params.id, req.query.limit)),
  );

  app.get(
    '/v1/cases/:id/activities',
    { schema: { params: idParams, querystring: caseActivitiesQuery, response: responses.activities } },
    async (req) => {
      const { items, total } = await cases.activities(req.identity, req.params.id, req.query);
      return page(items, pagination(req.query, total));
    },
  );
}
