// What the activities service asks the services that own its links: whether a
// case, client or deal exists in the team now (decisions §4: links are checked at
// write time), with the facts shown on activities.
import { isObject, type Caller, type ServiceClient } from '@lpm/shared/upstream/service-client';

export interface CaseFacts {
  id: string;
  title: string;
  number: string | null;
  updated_at: string;
}

export interface ClientFacts {
  id: string;
  name: string;
  updated_at: string;
}

export const isCaseFacts = (d: unknown): d is CaseFacts =>
  isObject(d) && ['id', 'title', 'updated_at'].every((k) => typeof d[k] === 'string') && (d.number === null || typeof d.number === 'string');

export const isClientFacts = (d: unknown): d is ClientFacts => isObject(d) && ['id', 'name', 'updated_at'].every((k) => typeof d[k] === 'string');

const hasId = (d: unknown): d is { id: string } => isObject(d) && typeof d.id === 'string';

/** GET /internal/cases/{id} of the cases service. */
export class CasesService {
  private readonly client: ServiceClient;
  constructor(client: ServiceClient) {
    this.client = client;
  }
  facts(who: Caller, caseId: string): Promise<CaseFacts | null> {
    return this.client.dataOrNull(who, 'GET', `/internal/cases/${encodeURIComponent(caseId)}`, isCaseFacts);
  }
}

/** GET /internal/clients/{id} of the clients service. */
export class ClientsService {
  private readonly client: ServiceClient;
  constructor(client: ServiceClient) {
    this.client = client;
  }
  facts(who: Caller, clientId: string): Promise<ClientFacts | null> {
    return this.client.dataOrNull(who, 'GET', `/internal/clients/${encodeURIComponent(clientId)}`, isClientFacts);
  }
}

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
