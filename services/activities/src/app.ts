// The activities service as an app: no listening here (server.ts does that), so
// tests build it with their own store and neighbours.
import type { FastifyInstance } from 'fastify';
import { createServiceApp, type ServiceAppOptions } from '@lpm/shared/http/service-app';
import { ACTIVITY_DOCS } from './contract/activity-operations.ts';
import type { TeamSyncs } from '@lpm/shared/jobs/team-syncs';
import type { Activities } from './domain/activities.ts';
import { activityRoutes } from './routes/activities.ts';
import { internalRoutes } from './routes/internal.ts';
import { deadlineRoutes } from './routes/deadlines.ts';

export interface ActivitiesAppOptions extends Omit<ServiceAppOptions, 'name' | 'docs'> {
  activities: Activities;
  /** The team syncs the gateway asks for (Activities.syncWork). */
  syncs: TeamSyncs;
}

export function buildActivitiesApp(opts: ActivitiesAppOptions): FastifyInstance {
  const app = createServiceApp({ ...opts, name: 'activities', docs: ACTIVITY_DOCS });
  app.register(async (scope) => {
    activityRoutes(scope, opts.activities);
    internalRoutes(scope, opts.activities, opts.syncs);
    deadlineRoutes(scope);
  });
  return app;
}
