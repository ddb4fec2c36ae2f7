// The gateway tells the activities service of a team's new court calendar at its
// POST /internal/court-calendar (and asks again until its run is done); a service
// this deployment does not run has no deadlines to move.
import type { CourtCalendarSettings } from '@lpm/shared/court-calendar';
import type { ServiceName } from '@lpm/shared/service/names';
import type { Caller, ServiceClient } from '@lpm/shared/upstream/service-client';
import type { Identity } from '@lpm/shared/identity';
import { syncDone } from './team-sync-answer.ts';

/** The activities service, as the gateway tells it of a calendar: true once its run is done. */
export interface DeadlineOwner {
  courtCalendarChanged(who: Identity, calendar: CourtCalendarSettings, changedAt: Date): Promise<boolean>;
}

export class ActivitiesService implements DeadlineOwner {
  private readonly client: ServiceClient;
  private readonly deployed: readonly ServiceName[];

  constructor(client: ServiceClient, deployed: readonly ServiceName[]) {
    this.client = client;
    this.deployed = deployed;
  }

  async courtCalendarChanged(who: Caller, calendar: CourtCalendarSettings, changedAt: Date): Promise<boolean> {
    if (!this.deployed.includes('activities')) return true;
    return syncDone(this.client, who, '/internal/court-calendar', {
      court_calendar: calendar,
      changed_at: changedAt.toISOString(),
    });
  }
}
