// What the clients service asks the cases service, which owns cases, at the moment
// of the question (read-your-writes: a case created a moment ago counts).
import type { ListQuery } from '@lpm/shared/http/pagination';
import { isObject, type Caller, type ServiceClient } from '@lpm/shared/upstream/service-client';

export interface ClientCaseItem {
  id: string;
  title: string;
  number: string | null;
  area: string | null;
  phase: string;
  priority: string;
  status: string;
  created_at: string;
}

/** The questions the clients domain asks about cases. */
export interface ClientCases {
  countByClient(who: Caller, clientIds: string[]): Promise<Map<string, number>>;
  hasActiveCases(who: Caller, clientId: string): Promise<boolean>;
  listForClient(who: Caller, clientId: string, query: ListQuery): Promise<{ items: ClientCaseItem[]; total: number }>;
}

const isCounts = (d: unknown): d is Record<string, number> =>
  isObject(d) && Object.values(d).every((n) => typeof n === 'number');
const isActive = (d: unknown): d is { active: boolean } => isObject(d) && typeof d.active === 'boolean';

export class ClientCasesService implements ClientCases {
  private readonly cases: ServiceClient;

  constructor(cases: ServiceClient) {
    this.cases = cases;
  }

  async countByClient(who: Caller, clientIds: string[]): Promise<Map<string, number>> {
    if (clientIds.length === 0) return new Map();
    return new Map(
      Object.entries(await this.cases.data(who, 'POST', '/internal/case-counts', isCounts, { client_ids: clientIds })),
    );
  }

  async hasActiveCases(who: Caller, clientId: string): Promise<boolean> {
    return (
      await this.cases.data(who, 'GET', `/internal/clients/${encodeURIComponent(clientId)}/active-cases`, isActive)
    ).active;
  }

  listForClient(who: Caller, clientId: string, q: ListQuery): Promise<{ items: ClientCaseItem[]; total: number }> {
    return this.cases.page<ClientCaseItem>(who, `/internal/clients/${encodeURIComponent(clientId)}/cases`, q);
  }
}
