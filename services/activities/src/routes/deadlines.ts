import type { ServiceRoutes } from '@lpm/shared/service/domain-app';
import { ok } from '@lpm/shared/http/envelope';
import { deadlineOf } from '../domain/deadlines/deadlines.ts';
import { computeDeadlineBody, computeResponse } from '../contract/deadline-schemas.ts';

export function deadlineRoutes(app: ServiceRoutes): void {
  // A computation only: the gateway lets a read key call it.
  app.post('/v1/deadlines/compute', { schema: { body: computeDeadlineBody, response: computeResponse } }, async (req) =>
    ok(deadlineOf(req.body, req.identity.settings.court_calendar)),
  );
}
