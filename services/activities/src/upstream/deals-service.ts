// What the activities service asks the deals service: whether a deal exists in the
// team now (docs/decisions.md §4: links are checked at write time). Cases and clients are
// asked through the shared adapters (upstream/cases-service, upstream/clients-service).
import { isObject, type Caller, type ServiceClient } from '@lpm/shared/upstream/service-client';

const hasId = (d: unknown): d is { id: string } => isObject(d) && typeof d.id === 'string';

/** The deals service: does the deal exist in the team now. */
export class DealsService {
  private readonly client: ServiceClient;
  constructor(client: ServiceClient) {
    this.client = client;
  }
  async exists(who: Caller, dealId: string): Promise<boolean> {
    return (await this.client.dataOrNull(who, 'GET', `/internal/deals/${encodeURIComponent(dealId)}`, hasId)) !== null;
  }
}
