// What the clients service needs to know about cases, asked of the cases service,
// which owns them, at the moment of the question (read-your-writes: a case created
// a moment ago counts).
import type { ListQuery } from '@lpm/shared/http/pagination';
import type { Caller, ServiceClient } from '@lpm/shared/upstream/service-client';

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

export interface CaseDirectory {
  countByClient(who: Caller, clientIds: string[]): Promise<Map<string, number>>;
  hasActiveCases(who: Caller, clientId: string): Promise<boolean>;
  listForClient(who: Caller, clientId: string, query: ListQuery): Promise<{ items: ClientCaseItem[]; total: number }>;
}

function expectOk(res: { status: number }, what: string): void {
  if (res.status !== 200) throw new Error(`cases service answered ${res.status} to ${what}`);
}

export function casesServiceDirectory(cases: ServiceClient): CaseDirectory {
  return {
    async countByClient(who, clientIds) {
      if (clientIds.length === 0) return new Map();
      const res = await cases.request<{ data: Record<string, number> }>(who, 'POST', '/internal/case-counts', { client_ids: clientIds });
      expectOk(res, 'a case count');
      return new Map(Object.entries(res.body.data));
    },
    async hasActiveCases(who, clientId) {
      const res = await cases.request<{ data: { active: boolean } }>(who, 'GET', `/internal/clients/${encodeURIComponent(clientId)}/active-cases`);
      expectOk(res, 'an active-cases check');
      return res.body.data.active;
    },
    listForClient: (who, clientId, q) => cases.page<ClientCaseItem>(who, `/internal/clients/${encodeURIComponent(clientId)}/cases`, q),
  };
}
