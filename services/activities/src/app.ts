import type { FastifyInstance } from 'fastify';
import { buildServiceApp, type DomainAppOptions } from '@lpm/shared/service/domain-app';
import type { TeamSyncs } from '@lpm/shared/jobs/team-syncs';
import { ACTIVITY_DOCS } from './contract/activity-operations.ts';
import type { Activities } from './domain/activities.ts';
import { activityRoutes } from './routes/activities.ts';
import { internalRoutes } from './routes/internal.ts';
import { deadlineRoutes } from './routes/deadlines.ts';

export interface ActivitiesAppOptions extends DomainAppOptions {
  activities: Activities;
  /** The team syncs the gateway asks for (Activities.syncWork). */
  syncs: TeamSyncs;
}

export function buildActivitiesApp(opts: ActivitiesAppOptions): FastifyInstance {
  return buildServiceApp('activities', ACTIVITY_DOCS, opts, [activityRoutes, internalRoutes, deadlineRoutes]);
}
