import type { ServiceRoutes } from '@lpm/shared/service/domain-app';
import { ok } from '@lpm/shared/http/envelope';
import { idParams } from '@lpm/shared/http/common-schemas';
import { pageOf, recordRoutes } from '@lpm/shared/service/record-routes';
import type { Activities } from '../domain/activities.ts';
import { completeActivityBody, overdueQuery, recordContract, responses } from '../contract/activity-schemas.ts';

export function activityRoutes(app: ServiceRoutes, { activities }: { activities: Activities }): void {
  recordRoutes(app, '/v1/activities', activities, recordContract, (who, id) => activities.remove(who, id));

  // A static path: the router never reads "overdue" as an id.
  app.get(
    '/v1/activities/overdue',
    { schema: { querystring: overdueQuery, response: responses.overdue } },
    async (req) => pageOf(req.query, await activities.overdue(req.identity, req.query)),
  );

  app.put(
    '/v1/activities/:id/complete',
    { schema: { params: idParams, body: completeActivityBody, response: responses.completed } },
    async (req) => ok(await activities.complete(req.identity, req.params.id, req.body?.notes)),
  );
}
