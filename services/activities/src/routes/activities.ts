import type { FastifyInstance } from 'fastify';
import { ok, page } from '@lpm/shared/http/envelope';
import { pagination } from '@lpm/shared/http/pagination';
import type { SchemaTypes } from '@lpm/shared/http/schemas';
import { idParams } from '@lpm/shared/http/common-schemas';
import type { Activities } from '../domain/activities.ts';
import {
  completeActivityBody,
  createActivityBody,
  listActivitiesQuery,
  overdueQuery,
  responses,
  updateActivityBody,
} from '../contract/activity-schemas.ts';

export function activityRoutes(fastify: FastifyInstance, activities: Activities): void {
  const app = fastify.withTypeProvider<SchemaTypes>();

  app.get('/v1/activities', { schema: { querystring: listActivitiesQuery, response: responses.list } }, async (req) => {
    const { items, total } = await activities.list(req.identity, req.query);
    return page(items, pagination(req.query, total));
  });

  // Before /:id, so "overdue" is never read as an id.
  app.get(
    '/v1/activities/overdue',
    { schema: { querystring: overdueQuery, response: responses.overdue } },
    async (req) => {
      const { items, total } = await activities.overdue(req.identity, req.query);
      return page(items, pagination(req.query, total));
    },
  );

  app.post(
    '/v1/activities',
    { schema: { body: createActivityBody, response: responses.created } },
    async (req, reply) => {
      reply.status(201);
      return ok(await activities.create(req.identity, req.body));
    },
  );

  app.get('/v1/activities/:id', { schema: { params: idParams, response: responses.detail } }, async (req) =>
    ok(await activities.get(req.identity, req.params.id)),
  );

  app.put(
    '/v1/activities/:id',
    { schema: { params: idParams, body: updateActivityBody, response: responses.updated } },
    async (req) => ok(await activities.update(req.identity, req.params.id, req.body)),
  );

  app.put(
    '/v1/activities/:id/complete',
    { schema: { params: idParams, body: completeActivityBody, response: responses.completed } },
    async (req) => ok(await activities.complete(req.identity, req.params.id, req.body?.notes)),
  );

  app.delete('/v1/activities/:id', { schema: { params: idParams, response: responses.deleted } }, async (req) =>
    ok(await activities.remove(req.identity, req.params.id)),
  );
}
