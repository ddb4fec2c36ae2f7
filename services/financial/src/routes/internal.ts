// What the gateway tells the owner of financial records. It presents the internal
// credential; these routes are not in the public document.
import type { FastifyInstance } from 'fastify';
import { ok } from '@lpm/shared/http/envelope';
import type { SchemaTypes } from '@lpm/shared/http/schemas';
import type { Financial } from '../domain/financial.ts';

export function internalRoutes(fastify: FastifyInstance, financial: Financial): void {
  const app = fastify.withTypeProvider<SchemaTypes>();

  // The gateway, after a team's time zone changed (and again until this answers): the new zone is in the settings header.
  app.post('/internal/time-zone', { schema: { hide: true } }, async (req) => ok(await financial.applyTimeZone(req.identity)));
}
