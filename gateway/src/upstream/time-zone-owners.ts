// The services whose records hold instants a team's time zone decides (cases: SLA
// signals; activities: due moments, due_soon, overdue, reminders; financial:
// overdue), told at their POST /internal/time-zone after the zone changed, and asked
// again until each run is done. The new zone travels in the settings header, as on
// every request. A service this deployment does not run has no records to re-arm.
import type { ServiceName } from '@lpm/shared/service/names';
import type { Caller, ServiceClient } from '@lpm/shared/upstream/service-client';
import type { Identity } from '@lpm/shared/identity';
import { syncDone } from './team-sync-answer.ts';

export const TIME_ZONE_OWNERS = ['cases', 'activities', 'financial'] as const satisfies readonly ServiceName[];

/** The services whose stored instants a team's time zone decides: true once every run is done. */
export interface TimeZoneOwners {
  timeZoneChanged(who: Identity, changedAt: Date): Promise<boolean>;
}

export class TimeZoneServices implements TimeZoneOwners {
  private readonly clients: ServiceClient[];

  /** `clients`: those of TIME_ZONE_OWNERS that this deployment runs. */
  constructor(clients: ServiceClient[]) {
    this.clients = clients;
  }

  async timeZoneChanged(who: Caller, changedAt: Date): Promise<boolean> {
    const done = await Promise.all(
      this.clients.map((client) =>
        syncDone(client, who, '/internal/time-zone', { changed_at: changedAt.toISOString() }),
      ),
    );
    return done.every(Boolean);
  }
}
