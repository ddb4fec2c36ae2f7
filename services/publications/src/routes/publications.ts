import type { ServiceRoutes } from '@lpm/shared/service/domain-app';
import { ok } from '@lpm/shared/http/envelope';
import { forbidden } from '@lpm/shared/errors';
import { pageOf, recordReadRoute, recordUpdateRoute } from '@lpm/shared/service/record-routes';
import type { Publications } from '../domain/publications.ts';
import { listPublicationsQuery, responses, updatePublicationBody } from '../contract/publication-schemas.ts';

/** Starts a poll now: false when one is already under way. */
export type SyncTrigger = () => Promise<boolean>;

export function publicationRoutes(
  app: ServiceRoutes,
  { publications, sync }: { publications: Publications; sync: SyncTrigger },
): void {
  app.get(
    '/v1/publications',
    { schema: { querystring: listPublicationsQuery, response: responses.list } },
    async (req) => pageOf(req.query, await publications.list(req.identity, req.query)),
  );

  // Before /v1/publications/:id.
  app.post('/v1/publications/sync', { schema: { response: responses.sync } }, async (req, reply) => {
    if (!req.identity.scopes.includes('admin')) throw forbidden();
    reply.status(202);
    return ok({ started: await sync() });
  });

  recordReadRoute(app, '/v1/publications/:id', publications, responses.detail);
  recordUpdateRoute(app, '/v1/publications/:id', publications, updatePublicationBody, responses.detail);
}
