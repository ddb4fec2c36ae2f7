import type { ServiceRoutes } from '@lpm/shared/service/domain-app';
import { idParams } from '@lpm/shared/http/common-schemas';
import { pageOf, recordRoutes } from '@lpm/shared/service/record-routes';
import type { Clients } from '../domain/clients.ts';
import { clientCasesQuery, recordContract, responses } from '../contract/client-schemas.ts';

export function clientRoutes(app: ServiceRoutes, { clients }: { clients: Clients }): void {
  recordRoutes(app, '/v1/clients', clients, recordContract, (who, id) => clients.deactivate(who, id));

  app.get(
    '/v1/clients/:id/cases',
    { schema: { params: idParams, querystring: clientCasesQuery, response: responses.cases } },
    async (req) => pageOf(req.query, await clients.listCases(req.identity, req.params.id, req.query)),
  );
}
