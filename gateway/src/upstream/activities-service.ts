// The gateway tells the activities service of a team's new court calendar at its
// POST /internal/court-calendar; a service this deployment does not run has no
// deadlines to move.
import type { CourtCalendarSettings } from '@lpm/shared/court-calendar';
import type { ServiceName } from '@lpm/shared/service/names';
import { isObject, type Caller, type ServiceClient } from '@lpm/shared/upstream/service-client';
import type { DeadlineOwner } from '../domain/calendar-sync.ts';

const isApplied = (d: unknown): d is { changed: number } => isObject(d) && typeof d.changed === 'number';

export class ActivitiesService implements DeadlineOwner {
  private readonly client: ServiceClient;
  private readonly deployed: readonly ServiceName[];

  constructor(client: ServiceClient, deployed: readonly ServiceName[]) {
    this.client = client;
    this.deployed = deployed;
  }

  async courtCalendarChanged(who: Caller, calendar: CourtCalendarSettings, changedAt: Date): Promise<void> {
    if (!this.deployed.includes('activities')) return;
    await this.client.data(who, 'POST', '/internal/court-calendar', isApplied, { court_calendar: calendar, changed_at: changedAt.toISOString() });
  }
}
