import type { ServiceRoutes } from '@lpm/shared/service/domain-app';
import { ok } from '@lpm/shared/http/envelope';
import { idParams } from '@lpm/shared/http/common-schemas';
import { recordRoutes } from '@lpm/shared/service/record-routes';
import type { Deals } from '../domain/deals.ts';
import { lostBody, phaseBody, recordContract, responses, summaryQuery, wonBody } from '../contract/deal-schemas.ts';

export function dealRoutes(app: ServiceRoutes, { deals }: { deals: Deals }): void {
  recordRoutes(app, '/v1/deals', deals, recordContract, (who, id) => deals.archive(who, id));

  // A static path: the router never reads "summary" as an id.
  app.get('/v1/deals/summary', { schema: { querystring: summaryQuery, response: responses.summary } }, async (req) =>
    ok(await deals.summary(req.identity, req.query)),
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
}
