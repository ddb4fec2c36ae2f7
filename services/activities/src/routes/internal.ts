// Questions other services ask the owner of activities (documented in the
// service's README). Callers present the internal credential like the gateway
// does; these routes are not in the public document.
import type { ServiceRoutes } from '@lpm/shared/service/domain-app';
import { ok } from '@lpm/shared/http/envelope';
import { listQuerySchema } from '@lpm/shared/http/pagination';
import { arrayOf, enumOf, object, text, typed } from '@lpm/shared/http/schemas';
import { closuresSchema, jurisdictionSchema, type CourtCalendarSettings } from '@lpm/shared/court-calendar';
import type { TeamSyncs } from '@lpm/shared/jobs/team-syncs';
import { changedAt, syncAnswer, syncBody } from '@lpm/shared/http/team-sync-route';
import { idParams } from '@lpm/shared/http/common-schemas';
import { pageOf } from '@lpm/shared/service/record-routes';
import type { Activities } from '../domain/activities.ts';
import { ACTIVITY_SORT_FIELDS } from '../contract/activity-schemas.ts';

const countsBody = object(
  { kind: enumOf(['case', 'client', 'deal'], 'Invalid kind'), ids: arrayOf(text(100), { maxItems: 100 }) },
  ['kind', 'ids'],
);

const courtCalendarBody = object(
  {
    // As the gateway stored it: jurisdiction complete, closures checked there.
    court_calendar: typed<CourtCalendarSettings>(
      object({ jurisdiction: jurisdictionSchema(), closures: closuresSchema(1000) }, ['jurisdiction', 'closures']),
    ),
    changed_at: changedAt(),
  },
  ['court_calendar', 'changed_at'],
);

export function internalRoutes(
  app: ServiceRoutes,
  { activities, syncs }: { activities: Activities; syncs: TeamSyncs },
): void {
  app.get(
    '/internal/cases/:id/activities',
    { schema: { hide: true, params: idParams, querystring: listQuerySchema(ACTIVITY_SORT_FIELDS) } },
    async (req) => pageOf(req.query, await activities.listForCase(req.identity.teamId, req.params.id, req.query)),
  );

  for (const kind of ['case', 'client', 'deal'] as const) {
    app.get(`/internal/${kind}s/:id/activities/count`, { schema: { hide: true, params: idParams } }, async (req) => {
      const { id } = req.params;
      return ok(await activities.countsOf(req.identity.teamId, kind, id));
    });
  }

  // The gateway, after a team's court calendar changed, and again until the answer says done (team-syncs.ts).
  app.post('/internal/court-calendar', { schema: { hide: true, body: courtCalendarBody } }, async (req, reply) => {
    const who = { ...req.identity, settings: { ...req.identity.settings, court_calendar: req.body.court_calendar } };
    return syncAnswer(reply, await syncs.request('court-calendar', who, new Date(req.body.changed_at)));
  });

  // The gateway, after a team's time zone changed, and again until the answer says done: the new zone is in the settings header.
  app.post('/internal/time-zone', { schema: { hide: true, body: syncBody } }, async (req, reply) =>
    syncAnswer(reply, await syncs.request('time-zone', req.identity, new Date(req.body.changed_at))),
  );

  app.post('/internal/activity-counts', { schema: { hide: true, body: countsBody } }, async (req) =>
    ok(await activities.countBy(req.identity.teamId, req.body.kind, req.body.ids)),
  );
}
