// Questions other services ask the owner of cases. Callers present the internal
// credential like the gateway does; these routes are not in the public document.
import type { FastifyInstance } from 'fastify';
import { ok, page } from '@lpm/shared/http/envelope';
import { listQuerySchema, pagination, type ListQuery } from '@lpm/shared/http/pagination';
import { object } from '@lpm/shared/http/schemas';
import type { Cases } from '../domain/cases.ts';
import { CASE_SORT_FIELDS } from './case-schemas.ts';

const clientParams = object({ id: { type: 'string', maxLength: 100 } }, ['id']);
const ids = { type: 'array', maxItems: 100, items: { type: 'string', maxLength: 100 } };

export function internalRoutes(app: FastifyInstance, cases: Cases): void {
  app.post<{ Body: { client_ids: string[] } }>(
    '/internal/case-counts',
    { schema: { hide: true, body: object({ client_ids: ids }, ['client_ids']) } },
    async (req) => ok(await cases.countByClient(req.identity.teamId, req.body.client_ids)),
  );

  app.get<{ Params: { id: string } }>('/internal/clients/:id/active-cases', { schema: { hide: true, params: clientParams } }, async (req) =>
    ok({ active: await cases.hasActiveCases(req.identity.teamId, req.params.id) }),
  );

  app.get<{ Params: { id: string }; Querystring: ListQuery }>(
    '/internal/clients/:id/cases',
    { schema: { hide: true, params: clientParams, querystring: listQuerySchema(CASE_SORT_FIELDS) } },
    async (req) => {
      const { items, total } = await cases.listForClient(req.identity.teamId, req.params.id, req.query);
      return page(items, pagination(req.query, total));
    },
  );

  app.post<{ Body: { kind: string; phases: string[] } }>(
    '/internal/phases-in-use',
    { schema: { hide: true, body: object({ kind: { type: 'string', enum: ['case'] }, phases: ids }, ['kind', 'phases']) } },
    async (req) => ok({ in_use: await cases.phasesInUse(req.identity.teamId, req.body.phases) }),
  );
}
