import type { FastifyInstance } from 'fastify';
import { ok, page } from '@lpm/shared/http/envelope';
import { pagination, type ListQuery } from '@lpm/shared/http/pagination';
import type { Cases, CaseListQuery } from '../domain/cases.ts';
import { caseActivitiesQuery, caseIdParams, createCaseBody, listCasesQuery, responses, timelineQuery, updateCaseBody } from './case-schemas.ts';

type Body = Record<string, unknown>;
type IdParams = { id: string };

export function caseRoutes(app: FastifyInstance, cases: Cases): void {
  app.get<{ Querystring: CaseListQuery }>('/v1/cases', { schema: { querystring: listCasesQuery, response: responses.list } }, async (req) => {
    const { items, total } = await cases.list(req.identity, req.query);
    return page(items, pagination(req.query, total));
  });

  app.post<{ Body: Body }>('/v1/cases', { schema: { body: createCaseBody, response: responses.created } }, async (req, reply) => {
    reply.status(201);
    return ok(await cases.create(req.identity, req.body));
  });

  app.get<{ Params: IdParams }>('/v1/cases/:id', { schema: { params: caseIdParams, response: responses.detail } }, async (req) =>
    ok(await cases.get(req.identity, req.params.id)),
  );

  app.put<{ Params: IdParams; Body: Body }>(
    '/v1/cases/:id',
    { schema: { params: caseIdParams, body: updateCaseBody, response: responses.updated } },
    async (req) => ok(await cases.update(req.identity, req.params.id, req.body)),
  );

  app.delete<{ Params: IdParams }>('/v1/cases/:id', { schema: { params: caseIdParams, response: responses.archived } }, async (req) =>
    ok(await cases.archive(req.identity, req.params.id)),
  );

  app.get<{ Params: IdParams; Querystring: { limit: number } }>(
    '/v1/cases/:id/timeline',
    { schema: { params: caseIdParams, querystring: timelineQuery, response: responses.timeline } },
    async (req) => ok(await cases.timeline(req.identity, req.params.id, req.query.limit)),
  );

  app.get<{ Params: IdParams; Querystring: ListQuery }>(
    '/v1/cases/:id/activities',
    { schema: { params: caseIdParams, querystring: caseActivitiesQuery, response: responses.activities } },
    async (req) => {
      const { items, total } = await cases.activities(req.identity, req.params.id, req.query);
      return page(items, pagination(req.query, total));
    },
  );
}
