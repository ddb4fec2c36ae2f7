// What the gateway tells the owner of financial records. It presents the internal
// credential; these routes are not in the public document.
import type { ServiceRoutes } from '@lpm/shared/service/domain-app';
import type { TeamSyncs } from '@lpm/shared/jobs/team-syncs';
import { syncAnswer, syncBody } from '@lpm/shared/http/team-sync-route';

export function internalRoutes(app: ServiceRoutes, { syncs }: { syncs: TeamSyncs }): void {
  // The gateway, after a team's time zone changed, and again until the answer says done (team-syncs.ts): the new zone is in the settings header.
  app.post('/internal/time-zone', { schema: { hide: true, body: syncBody } }, async (req, reply) =>
    syncAnswer(reply, await syncs.request('time-zone', req.identity, new Date(req.body.changed_at))),
  );
}
