// Questions other services ask the owner of cases. Callers present the internal
// credential like the gateway does; these routes are not in the public document.
import type { ServiceRoutes } from '@lpm/shared/service/domain-app';
import { ok } from '@lpm/shared/http/envelope';
import { listQuerySchema } from '@lpm/shared/http/pagination';
import { arrayOf, enumOf, integer, object, text } from '@lpm/shared/http/schemas';
import type { TeamSyncs } from '@lpm/shared/jobs/team-syncs';
import { syncAnswer, syncBody } from '@lpm/shared/http/team-sync-route';
import { idParams } from '@lpm/shared/http/common-schemas';
import { pageOf } from '@lpm/shared/service/record-routes';
import type { Cases } from '../domain/cases.ts';
import { CASE_SORT_FIELDS, dealCaseBody } from '../contract/case-schemas.ts';

const ids = arrayOf(text(100), { maxItems: 100 });
const caseCountsBody = object({ client_ids: ids }, ['client_ids']);
const phasesInUseBody = object({ kind: enumOf(['case'], 'Invalid kind'), phases: ids }, ['kind', 'phases']);
/** A page of every team's case numbers: `after` the last id of the page before (none for the first). */
const caseNumbersQuery = object({ after: text(100), limit: integer({ minimum: 1, maximum: 1000, default: 500 }) });

export function internalRoutes(app: ServiceRoutes, { cases, syncs }: { cases: Cases; syncs: TeamSyncs }): void {
  // The activities service checks a case_id and shows the case's title and number.
  app.get('/internal/cases/:id', { schema: { hide: true, params: idParams } }, async (req) =>
    ok(await cases.facts(req.identity.teamId, req.params.id)),
  );

  // The gateway, after a team's time zone changed, and again until the answer says done (team-syncs.ts): the new zone is in the settings header.
  app.post('/internal/time-zone', { schema: { hide: true, body: syncBody } }, async (req, reply) =>
    syncAnswer(reply, await syncs.request('time-zone', req.identity, new Date(req.body.changed_at))),
  );

  app.post('/internal/case-counts', { schema: { hide: true, body: caseCountsBody } }, async (req) =>
    ok(await cases.countByClient(req.identity.teamId, req.body.client_ids)),
  );

  app.get('/internal/clients/:id/active-cases', { schema: { hide: true, params: idParams } }, async (req) =>
    ok({ active: await cases.hasActiveCases(req.identity.teamId, req.params.id) }),
  );

  app.get(
    '/internal/clients/:id/cases',
    { schema: { hide: true, params: idParams, querystring: listQuerySchema(CASE_SORT_FIELDS) } },
    async (req) => pageOf(req.query, await cases.listForClient(req.identity.teamId, req.params.id, req.query)),
  );

  // The deals service: the case of a deal won with create_case (201 made now, 200 made before; `client`: its client
  // as checked now, which the deal's event shows), and its archiving
  // when the deal is lost or archived before its won completed.
  app.post('/internal/deal-cases', { schema: { hide: true, body: dealCaseBody } }, async (req, reply) => {
    const { deal_id, ...body } = req.body;
    const made = await cases.createForDeal(req.identity, deal_id, body);
    reply.status(made.created ? 201 : 200);
    return ok({ ...made.case, client: made.client });
  });

  app.post('/internal/deal-cases/:id/archive', { schema: { hide: true, params: idParams } }, async (req) =>
    ok({ archived: await cases.archiveForDeal(req.identity, req.params.id) }),
  );

  // The publications service's first fill of its view of case numbers: every team's cases, by id, whatever team
  // the caller names; `next` is the `after` of the following page, null after the last.
  app.get('/internal/case-numbers', { schema: { hide: true, querystring: caseNumbersQuery } }, async (req) => {
    const limit = req.query.limit ?? 500;
    const items = await cases.numbersAfter(req.query.after ?? null, limit);
    return ok({ items, next: items.length === limit ? items[items.length - 1].id : null });
  });

  app.post('/internal/phases-in-use', { schema: { hide: true, body: phasesInUseBody } }, async (req) =>
    ok({ in_use: await cases.phasesInUse(req.identity.teamId, req.body.phases) }),
  );
}
