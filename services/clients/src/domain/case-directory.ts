// What the clients service needs to know about cases, which the cases service owns.
// Until that service exists the team has no cases; its issue replaces this
// implementation with one that asks the cases service.
import type { ListQuery } from '@lpm/shared/pagination';

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
  countByClient(teamId: string, clientIds: string[]): Promise<Map<string, number>>;
  /** Must see the present: a case created a moment ago counts. */
  hasActiveCases(teamId: string, clientId: string): Promise<boolean>;
  listForClient(teamId: string, clientId: string, query: ListQuery): Promise<{ items: ClientCaseItem[]; total: number }>;
}

export const noCasesYet: CaseDirectory = {
  countByClient: async (_teamId, clientIds) => new Map(clientIds.map((id) => [id, 0])),
  hasActiveCases: async () => false,
  listForClient: async () => ({ items: [], total: 0 }),
};
