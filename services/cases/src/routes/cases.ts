import type { FastifyRequest } from 'fastify';
import type { ServiceRoutes } from '@lpm/shared/service/domain-app';
import { ok } from '@lpm/shared/http/envelope';
import { idParams } from '@lpm/shared/http/common-schemas';
import { pageOf, recordRoutes } from '@lpm/shared/service/record-routes';
import { RESERVED_KEY_PREFIX, reservedIdempotencyKey } from '../contract/case-errors.ts';
import type { Cases } from '../domain/cases.ts';
import { caseActivitiesQuery, recordContract, responses, timelineQuery } from '../contract/case-schemas.ts';

/** Before the Idempotency-Key is taken (preValidation): a key with the reserved prefix is 400. */
async function refuseReservedKey(req: FastifyRequest): Promise<void> {
  const key = req.headers['idempotency-key'];
  if ((Array.isArray(key) ? key : [key]).some((k) => k?.startsWith(RESERVED_KEY_PREFIX)))
    throw reservedIdempotencyKey();
}

export function caseRoutes(app: ServiceRoutes, { cases }: { cases: Cases }): void {
  const contract = { ...recordContract, onCreate: refuseReservedKey };
  recordRoutes(app, '/v1/cases', cases, contract, (who, id) => cases.archive(who, id));

  app.get(
    '/v1/cases/:id/timeline',
    { schema: { params: idParams, querystring: timelineQuery, response: responses.timeline } },
    async (req) => ok(await cases.timeline(req.identity, req.params.id, req.query.limit)),
  );

  app.get(
    '/v1/cases/:id/activities',
    { schema: { params: idParams, querystring: caseActivitiesQuery, response: responses.activities } },
    async (req) => pageOf(req.query, await cases.activities(req.identity, req.params.id, req.query)),
  );
}
