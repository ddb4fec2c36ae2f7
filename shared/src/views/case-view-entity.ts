// The local copy of the cases a service shows beside its records (title and number
// on activities and financial records), fed by case events: for display only.
import { defineEntity, p } from '@mikro-orm/mongodb';
import type { CaseFacts } from '../upstream/cases-service.ts';
import type { RecordOf } from '../store/orm.ts';
import { viewProperties } from '../store/entity-properties.ts';

/** The collection's name, for a ViewsRepository<CaseView>. */
export const CASE_VIEWS = 'case_views';

export const CaseViewEntity = defineEntity({
  name: 'CaseView',
  collection: CASE_VIEWS,
  properties: {
    ...viewProperties,
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
