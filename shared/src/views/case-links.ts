// Cases as the other services see them (activities, financial): whether a case
// exists is asked of the cases service at the moment of a write; the titles and
// numbers shown beside records come from the local view that case events keep
// current (linked-views.ts).
import { caseNotFound } from '../errors.ts';
import type { CaseFacts, CaseLookup } from '../upstream/cases-service.ts';
import { caseViewOf, type CaseView } from './case-view-entity.ts';
import { LinkedViews } from './linked-views.ts';
import type { ViewsRepository } from './views-repository.ts';

export class CaseLinks extends LinkedViews<CaseFacts, CaseView> {
  constructor(cases: CaseLookup, views: ViewsRepository<CaseView>) {
    super({ idKind: 'case', lookup: cases, views, viewOf: caseViewOf, notFound: caseNotFound });
  }
}
