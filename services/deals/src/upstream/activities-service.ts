// What the deals service asks the activities service, which owns activities: how
// many activities a deal has, at the moment of reading its detail.
import { isObject, type Caller, type ServiceClient } from '@lpm/shared/upstream/service-client';

/** The activities service as the deals domain needs it. */
export interface DealActivities {
  countFor(who: Caller, dealId: string): Promise<number>;
}

const isCount = (d: unknown): d is { count: number } => isObject(d) && Number.isSafeInteger(d.count);

export class ActivitiesService implements DealActivities {
  private readonly activities: ServiceClient;

  constructor(activities: ServiceClient) {
    this.activities = activities;
  }

  async countFor(who: Caller, dealId: string): Promise<number> {
    return (await this.activities.data(who, 'GET', `/internal/deals/${encodeURIComponent(dealId)}/activities/count`, isCount)).count;
  }
}
