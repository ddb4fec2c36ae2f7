// A case's activities are the activities service's records: after the case is
// found here, the list is asked of that service's internal endpoint.
import type { ServiceClient } from '@lpm/shared/upstream/service-client';
import type { CaseActivities } from './cases.ts';

export const activitiesServiceList = (activities: ServiceClient): CaseActivities => ({
  list: (who, caseId, q) => activities.page(who, `/internal/cases/${encodeURIComponent(caseId)}/activities`, q),
});
