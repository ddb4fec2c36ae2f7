// What the cases service asks the activities service, which owns activities.
import type { ListQuery } from '@lpm/shared/http/pagination';
import type { Caller, ServiceClient } from '@lpm/shared/upstream/service-client';

export class ActivitiesService {
  private readonly activities: ServiceClient;

  constructor(activities: ServiceClient) {
    this.activities = activities;
  }

  /** One page of a case's activities. */
  listForCase(who: Caller, caseId: string, q: ListQuery): Promise<{ items: unknown[]; total: number }> {
    return this.activities.page(who, `/internal/cases/${encodeURIComponent(caseId)}/activities`, q);
  }
}
