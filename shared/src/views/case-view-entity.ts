// The local copy of the cases a service shows beside its records (title and number
// on activities and financial records), fed by case events: for display only.
import { p } from '@mikro-orm/mongodb';
import type { CaseFacts } from '../upstream/cases-service.ts';
import type { RecordOf } from '../store/orm.ts';
import { viewEntity } from '../store/entities.ts';

/** The collection's name, for a ViewsRepository<CaseView>. */
export const CASE_VIEWS = 'case_views';

export const CaseViewEntity = viewEntity('CaseView', CASE_VIEWS, {
  properties: {
    title: p.string(),
    number: p.string().strictNullable(),
  },
});

export type CaseView = RecordOf<typeof CaseViewEntity>;

export const caseViewOf = (teamId: string, c: CaseFacts): CaseView => ({
  _id: c.id,
  team_id: teamId,
  title: c.title,
  number: c.number ?? null,
  as_of: new Date(c.updated_at),
});
