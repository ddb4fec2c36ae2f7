// The activities app in process on its own database, with its neighbours faked:
// the cases, clients, deals and users the test adds exist, nothing else.
import type { TeamSyncs, TeamSyncsOptions } from '@lpm/shared/jobs/team-syncs';
import type { Relay } from '@lpm/shared/store/record-store-types';
import { CaseViewEntity } from '@lpm/shared/views/case-view-entity';
import { ClientViewEntity } from '@lpm/shared/views/client-view-entity';
import { Neighbours } from '@lpm/test-kit/neighbours';
import { caseLinksOn, clientLinksOn } from '@lpm/test-kit/view-links';
import { startServiceUnderTest, type ServiceUnderTest } from '@lpm/test-kit/service-under-test';
import { NO_RELAY, startTeamSyncs, withListsReady } from '@lpm/test-kit/service-parts';
import { buildActivitiesApp } from '../src/app.ts';
import { ActivitiesRepository } from '../src/data/activities-repository.ts';
import { ActivityEntity } from '../src/data/activity-entity.ts';
import { Activities } from '../src/domain/activities.ts';

export interface ActivitiesUnderTest extends ServiceUnderTest {
  activities: Activities;
  repository: ActivitiesRepository;
  world: Neighbours;
  clock: { now: Date | null };
  /** The team syncs its internal routes start (run by the test's own pass, every 100 ms). */
  syncs: TeamSyncs;
}

export function startActivities(
  opts: { relay?: Relay; dbName?: string; syncs?: Partial<TeamSyncsOptions> } = {},
): Promise<ActivitiesUnderTest> {
  return startServiceUnderTest({
    name: 'activities',
    entities: [ActivityEntity, CaseViewEntity, ClientViewEntity],
    dbName: opts.dbName,
    build: async ({ db, internalToken, logger }) => {
      const world = new Neighbours();
      const clock: { now: Date | null } = { now: null };
      const repository = await withListsReady(new ActivitiesRepository(db, opts.relay ?? NO_RELAY));
      const activities = new Activities({
        activities: repository,
        caseLinks: caseLinksOn(db, world.caseLookup),
        clientLinks: clientLinksOn(db, world.clientLookup),
        deals: world.dealLookup,
        users: world.userDirectory,
        now: () => clock.now ?? new Date(),
      });
      const syncs = await startTeamSyncs(db, activities.syncWork(), opts.syncs);
      const app = buildActivitiesApp({ activities, syncs, db, internalToken, logger });
      return { app, parts: { activities, repository, world, clock, syncs }, stop: () => syncs.stop() };
    },
  });
}
