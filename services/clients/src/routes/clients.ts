import type { FastifyInstance } from 'fastify';
import { ok, page } from '@lpm/shared/http/envelope';
import { pagination } from '@lpm/shared/http/pagination';
import type { SchemaTypes } from '@lpm/shared/http/schemas';
import { idParams } from '@lpm/shared/http/common-schemas';
import type { Clients } from '../domain/clients.ts';
import {
  clientCasesQuery,
  createClientBody,
  listClientsQuery,
  responses,
  updateClientBody,
} from '../contract/client-schemas.ts';

export function clientRoutes(fastify: FastifyInstance, clients: Clients): void {
  const app = fastify.withTypeProvider<SchemaTypes>();

  app.get('/v1/clients', { schema: { querystring: listClientsQuery, response: responses.list } }, async (req) => {
    const { items, total } = await clients.list(req.identity, req.query);
    return page(items, pagination(req.query, total));
  });

  app.post('/v1/clients', { schema: { body: createClientBody, response: responses.created } }, async (req, reply) => {
    reply.status(201);
    return ok(await clients.create(req.identity, req.body));
  });

  app.get('/v1/clients/:id', { schema: { params: idParams, response: responses.detail } }, async (req) =>
    ok(await clients.get(req.identity, req.params.id)),
  );

  app.put(
    '/v1/clients/:id',
    { schema: { params: idParams, body: updateClientBody, response: responses.updated } },
    async (req) => ok(await clients.update(req.identity, req.params.id, req.body)),
  );

  app.delete('/v1/clients/:id', { schema: { params: idParams, response: responses.deactivated } }, async (req) =>
    ok(await clients.deactivate(req.identity, req.params.id)),
  );

  app.get(
    '/v1/clients/:id/cases',
    { schema: { params: idParams, querystring: clientCasesQuery, response: responses.cases } },
    async (req) => {
      const { items, total } = await clients.listCases(req.identity, req.params.id, req.query);
      return page(items, pagination(req.query, total));
    },
  );
}
