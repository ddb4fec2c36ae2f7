// What the financial service asks the owners of clients and cases: whether a link
// exists in the team at the moment of the write, and the facts shown on records.
import { isObject, type Caller, type ServiceClient } from '@lpm/shared/upstream/service-client';

export interface ClientFacts {
  id: string;
  name: string;
  email: string | null;
  updated_at: string;
}

export interface CaseFacts {
  id: string;
  title: string;
  number: string | null;
  updated_at: string;
}

const nullableString = (v: unknown) => v === null || v === undefined || typeof v === 'string';

export const isClientFacts = (d: unknown): d is ClientFacts =>
  isObject(d) && ['id', 'name', 'updated_at'].every((k) => typeof d[k] === 'string') && nullableString(d.email);

export const isCaseFacts = (d: unknown): d is CaseFacts =>
  isObject(d) && ['id', 'title', 'updated_at'].every((k) => typeof d[k] === 'string') && nullableString(d.number);

/** The questions the domain asks (the test helper fakes them). */
export interface ClientLookup {
  facts(who: Caller, clientId: string): Promise<ClientFacts | null>;
}
export interface CaseLookup {
  facts(who: Caller, caseId: string): Promise<CaseFacts | null>;
}

export class ClientsService implements ClientLookup {
  private readonly clients: ServiceClient;
  constructor(clients: ServiceClient) {
    this.clients = clients;
  }
  /** The client as the clients service has it now; null when it is not the team's. */
  facts(who: Caller, clientId: string): Promise<ClientFacts | null> {
    return this.clients.dataOrNull(who, 'GET', `/internal/clients/${encodeURIComponent(clientId)}`, isClientFacts);
  }
}

export class CasesService implements CaseLookup {
  private readonly cases: ServiceClient;
  constructor(cases: ServiceClient) {
    this.cases = cases;
  }
  /** The case as the cases service has it now; null when it is not the team's. */
  facts(who: Caller, caseId: string): Promise<CaseFacts | null> {
    return this.cases.dataOrNull(who, 'GET', `/internal/cases/${encodeURIComponent(caseId)}`, isCaseFacts);
  }
}
