// Every team's case numbers as the cases service has them now (GET
// /internal/case-numbers), page after page by case id: the first fill of the view.
import { isObject, type ServiceClient } from '@lpm/shared/upstream/service-client';

export interface CaseNumberItem {
  id: string;
  team_id: string;
  number: string | null;
  updated_at: string;
}

export interface CaseNumbersPage {
  items: CaseNumberItem[];
  /** The `after` of the following page; null after the last. */
  next: string | null;
}

/** Where the backfill reads the cases from (tests may give their own). */
export interface CaseNumbersSource {
  page(after: string | null, limit: number): Promise<CaseNumbersPage>;
}

const isItem = (i: unknown): i is CaseNumberItem =>
  isObject(i) &&
  typeof i.id === 'string' &&
  typeof i.team_id === 'string' &&
  typeof i.updated_at === 'string' &&
  (i.number === null || typeof i.number === 'string');

const isPage = (d: unknown): d is CaseNumbersPage =>
  isObject(d) && Array.isArray(d.items) && d.items.every(isItem) && (d.next === null || typeof d.next === 'string');

export class CasesNumbers implements CaseNumbersSource {
  private readonly cases: ServiceClient;

  constructor(cases: ServiceClient) {
    this.cases = cases;
  }

  page(after: string | null, limit: number): Promise<CaseNumbersPage> {
    const query = new URLSearchParams({ limit: String(limit), ...(after === null ? {} : { after }) });
    // Every team's cases: no team is in question, so none is named.
    return this.cases.data({ teamId: '-', userId: '-' }, 'GET', `/internal/case-numbers?${query.toString()}`, isPage);
  }
}
