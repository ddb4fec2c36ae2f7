import type { FastifyInstance } from 'fastify';
import { ok, page } from '@lpm/shared/http/envelope';
import { pagination, type ListQuery } from '@lpm/shared/http/pagination';
import type { Clients, ClientListQuery } from '../domain/clients.ts';
import { clientCasesQuery, clientIdParams, createClientBody, listClientsQuery, responses, updateClientBody } from './client-schemas.ts';

type Body = Record<string, unknown>;
type IdParams = { id: string };

export function clientRoutes(app: FastifyInstance, clients: Clients): void {
  app.get<{ Querystring: ClientListQuery }>('/v1/clients', { schema: { querystring: listClientsQuery, response: responses.list } }, async (req) => {
    const { items, total } = await clients.list(req.identity, req.query);
    return page(items, pagination(req.query, total));
  });

  app.post<{ Body: Body }>('/v1/clients', { schema: { body: createClientBody, response: responses.created } }, async (req, reply) => {
    reply.status(201);
    return ok(await clients.create(req.identity, req.body));
  });

  app.get<{ Params: IdParams }>('/v1/clients/:id', { schema: { params: clientIdParams, response: responses.detail } }, async (req) =>
    ok(await clients.get(req.identity, req.params.id)),
  );

  app.put<{ Params: IdParams; Body: Body }>(
    '/v1/clients/:id',
    { schema: { params: clientIdParams, body: updateClientBody, response: responses.updated } },
    async (req) => ok(await clients.update(req.identity, req.params.id, req.body)),
  );

  app.delete<{ Params: IdParams }>('/v1/clients/:id', { schema: { params: clientIdParams, response: responses.deactivated } }, async (req) =>
    ok(await clients.deactivate(req.identity, req.params.id)),
  );

  app.get<{ Params: IdParams; Querystring: ListQuery }>(
    '/v1/clients/:id/cases',
    { schema: { params: clientIdParams, querystring: clientCasesQuery, response: responses.cases } },
    async (req) => {
      const { items, total } = await clients.listCases(req.identity, req.params.id, req.query);
      return page(items, pagination(req.query, total));
    },
  );
}
