// Questions other services ask the owner of clients. Callers present the internal
// credential like the gateway does; these routes are not in the public document.
import type { ServiceRoutes } from '@lpm/shared/service/domain-app';
import { ok } from '@lpm/shared/http/envelope';
import { idParams } from '@lpm/shared/http/common-schemas';
import type { Clients } from '../domain/clients.ts';

export function internalRoutes(app: ServiceRoutes, { clients }: { clients: Clients }): void {
  app.get('/internal/clients/:id', { schema: { hide: true, params: idParams } }, async (req) =>
    ok(await clients.facts(req.identity, req.params.id)),
  );
}
