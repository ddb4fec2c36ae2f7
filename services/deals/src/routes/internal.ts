// Questions other services ask the owner of deals. Callers present the internal
// credential like the gateway does; these routes are not in the public document.
import type { ServiceRoutes } from '@lpm/shared/service/domain-app';
import { ok } from '@lpm/shared/http/envelope';
import { arrayOf, enumOf, object, text } from '@lpm/shared/http/schemas';
import { idParams } from '@lpm/shared/http/common-schemas';
import type { Deals } from '../domain/deals.ts';

const phasesInUseBody = object(
  { kind: enumOf(['deal'], 'Invalid kind'), phases: arrayOf(text(100), { maxItems: 100 }) },
  ['kind', 'phases'],
);

export function internalRoutes(app: ServiceRoutes, { deals }: { deals: Deals }): void {
  // Activities check a deal_id at write time (404 Deal not found when it is not the team's).
  app.get('/internal/deals/:id', { schema: { hide: true, params: idParams } }, async (req) =>
    ok(await deals.facts(req.identity.teamId, req.params.id)),
  );

  // The gateway asks before a team removes pipeline phases (a phase the team's deals still use cannot be removed).
  app.post('/internal/phases-in-use', { schema: { hide: true, body: phasesInUseBody } }, async (req) =>
    ok({ in_use: await deals.phasesInUse(req.identity.teamId, req.body.phases) }),
  );
}
