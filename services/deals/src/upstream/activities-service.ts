// What the deals service asks the activities service, which owns activities: how
// many activities a deal has, open and overdue, at the moment of reading its detail.
import { isObject, type Caller, type ServiceClient } from '@lpm/shared/upstream/service-client';

/** A deal's activities, as the activities service counts them at the moment of reading. */
export interface DealActivityCounts {
  count: number;
  /** Pending or in progress. */
  open: number;
  /** Open and past their due moment. */
  overdue: number;
}

/** The activities service as the deals domain needs it. */
export interface DealActivities {
  countsFor(who: Caller, dealId: string): Promise<DealActivityCounts>;
}

const isCounts = (d: unknown): d is DealActivityCounts =>
  isObject(d) && ['count', 'open', 'overdue'].every((k) => Number.isSafeInteger(d[k]));

export class ActivitiesService implements DealActivities {
  private readonly activities: ServiceClient;

  constructor(activities: ServiceClient) {
    this.activities = activities;
  }

  countsFor(who: Caller, dealId: string): Promise<DealActivityCounts> {
    return this.activities.data(who, 'GET', `/internal/deals/${encodeURIComponent(dealId)}/activities/count`, isCounts);
  }
}
