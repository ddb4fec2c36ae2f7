// Questions other services ask the owner of clients. Callers present the internal
// credential like the gateway does; these routes are not in the public document.
import type { FastifyInstance } from 'fastify';
import { ok } from '@lpm/shared/http/envelope';
import type { SchemaTypes } from '@lpm/shared/http/schemas';
import { idParams } from '@lpm/shared/http/common-schemas';
import type { Clients } from '../domain/clients.ts';

export function internalRoutes(fastify: FastifyInstance, { clients }: { clients: Clients }): void {
  const app = fastify.withTypeProvider<SchemaTypes>();
  app.get('/internal/clients/:id', { schema: { hide: true, params: idParams } }, async (req) =>
    ok(await clients.facts(req.identity, req.params.id)),
  );
}
