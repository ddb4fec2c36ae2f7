import type { ServiceRoutes } from '@lpm/shared/service/domain-app';
import { ok } from '@lpm/shared/http/envelope';
import { pageOf, recordRoutes } from '@lpm/shared/service/record-routes';
import type { Financial } from '../domain/financial.ts';
import { overdueQuery, recordContract, responses, summaryQuery } from '../contract/financial-schemas.ts';

export function financialRoutes(app: ServiceRoutes, { financial }: { financial: Financial }): void {
  recordRoutes(app, '/v1/financial', financial, recordContract, (who, id) => financial.cancel(who, id));

  // Static paths: the router never reads them as an id.
  app.get(
    '/v1/financial/summary',
    { schema: { querystring: summaryQuery, response: responses.summary } },
    async (req) => ok(await financial.summary(req.identity, req.query)),
  );

  app.get(
    '/v1/financial/overdue',
    { schema: { querystring: overdueQuery, response: responses.overdue } },
    async (req) => pageOf(req.query, await financial.overdue(req.identity, req.query)),
  );
}
