// POST and DELETE /v1/webhooks/portal-sessions (admin scope), served by the gateway,
// which owns credentials: the static path is routed here before the webhooks
// service's proxy prefix.
import type { FastifyInstance } from 'fastify';
import { ok } from '@lpm/shared/http/envelope';
import type { SchemaTypes } from '@lpm/shared/http/schemas';
import { openPortalSessionBody, portalResponses, portalSessionParams } from '../contract/portal-schemas.ts';
import type { PortalSessions } from '../domain/portal-sessions.ts';

export function portalSessionRoutes(fastify: FastifyInstance, sessions: PortalSessions): void {
  const app = fastify.withTypeProvider<SchemaTypes>();
  const config = { adminOnly: true };

  app.post(
    '/v1/webhooks/portal-sessions',
    { config, schema: { body: openPortalSessionBody, response: portalResponses.opened } },
    async (req, reply) => {
      reply.status(201);
      return ok(await sessions.open(req.principal!, req.body, `${req.protocol}://${req.host}`));
    },
  );

  app.delete(
    '/v1/webhooks/portal-sessions/:id',
    { config, schema: { params: portalSessionParams, response: portalResponses.revoked } },
    async (req) => ok(await sessions.revoke(req.principal!, req.params.id)),
  );
}
