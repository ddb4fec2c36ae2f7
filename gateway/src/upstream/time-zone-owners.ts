// The services whose records hold instants a team's time zone decides (cases: SLA
// signals; activities: due moments, due_soon, overdue, reminders; financial:
// overdue), told at their POST /internal/time-zone after the zone changed. The new
// zone travels in the settings header, as on every request. A service this
// deployment does not run has no records to re-arm.
import type { ServiceName } from '@lpm/shared/service/names';
import { isObject, type Caller, type ServiceClient } from '@lpm/shared/upstream/service-client';
import type { TimeZoneOwners } from '../domain/calendar-sync.ts';

export const TIME_ZONE_OWNERS = ['cases', 'activities', 'financial'] as const satisfies readonly ServiceName[];

const isApplied = (d: unknown): d is { changed: number } => isObject(d) && typeof d.changed === 'number';

export class TimeZoneServices implements TimeZoneOwners {
  private readonly clients: ServiceClient[];

  /** `clients`: those of TIME_ZONE_OWNERS that this deployment runs. */
  constructor(clients: ServiceClient[]) {
    this.clients = clients;
  }

  async timeZoneChanged(who: Caller): Promise<void> {
    for (const client of this.clients) await client.data(who, 'POST', '/internal/time-zone', isApplied, {});
  }
}
