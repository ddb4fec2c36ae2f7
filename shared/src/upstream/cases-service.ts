// What a service asks the cases service, which owns cases: a case's facts at the
// moment of a write that links to it (GET /internal/cases/{id}).
import { isObject, type Caller, type ServiceClient } from './service-client.ts';

/** The fields of a case that other services keep. */
export interface CaseFacts {
  id: string;
  title: string;
  number: string | null;
  updated_at: string;
}

export const isCaseFacts = (d: unknown): d is CaseFacts =>
  isObject(d) &&
  ['id', 'title', 'updated_at'].every((k) => typeof d[k] === 'string') &&
  (d.number === null || typeof d.number === 'string');

/** The question a domain asks of the cases service (its test helper fakes it). */
export interface CaseLookup {
  facts(who: Caller, caseId: string): Promise<CaseFacts | null>;
}

export class CasesService implements CaseLookup {
  private readonly cases: ServiceClient;

  constructor(cases: ServiceClient) {
    this.cases = cases;
  }

  /** The case as the cases service has it now, or null when it is not the team's. */
  facts(who: Caller, caseId: string): Promise<CaseFacts | null> {
    return this.cases.dataOrNull(who, 'GET', `/internal/cases/${encodeURIComponent(caseId)}`, isCaseFacts);
  }
}
