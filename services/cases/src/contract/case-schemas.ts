import * as s from '@lpm/shared/http/schemas';
import { listQuerySchema } from '@lpm/shared/http/pagination';
import { describedFields, nameLink } from '@lpm/shared/http/common-schemas';
import { recordResponses, stampedStatus, writtenShapes } from '@lpm/shared/http/record-responses';
import { contactLink, describedShape, listItemShape, listedClient, ownerIds } from '@lpm/shared/http/read-shapes';
import { PRIORITIES } from '@lpm/shared/priority';

export const CASE_STATUSES = ['ativo', 'arquivado'] as const;

export const CASE_SORT_FIELDS = ['created_at', 'updated_at', 'title', 'priority', 'sla_date'] as const;

const id = s.text(100);
const priority = s.enumOf(PRIORITIES, 'Invalid priority');
const status = s.enumOf(CASE_STATUSES, 'Invalid status');

const caseFields = {
  title: s.name(),
  /** Any text; a CNJ number (NNNNNNN-DD.AAAA.J.TR.OOOO, or its 20 digits) is stored masked and explained in number_info. */
  number: s.nullable(s.text(100, { examples: ['0001234-56.2023.8.26.0100', '00012345620238260100', 'INT-2024/017'] })),
  area: s.nullable(s.text()),
  subject: s.nullable(s.text()),
  // Checked against the team's kanban in the domain (400 Invalid phase).
  phase: s.text(100, { 'x-message': 'Invalid phase' }),
  priority,
  client_id: s.nullable(id),
  responsible_id: s.nullable(id),
  sla_date: s.nullable(s.date()),
  ...describedFields,
};

export const createCaseBody = s.named(
  'CreateCaseRequest',
  'A new case: only the title is required.',
  s.object(caseFields, ['title']),
);
export const updateCaseBody = s.named(
  'UpdateCaseRequest',
  'Any subset of the case fields; status moves ativo <-> arquivado.',
  s.object({ ...caseFields, status }),
);

/** What the deals service asks for the case of a won deal: the deal, and the case's fields. */
export const dealCaseBody = s.object(
  {
    deal_id: id,
    title: caseFields.title,
    area: caseFields.area,
    client_id: caseFields.client_id,
    responsible_id: caseFields.responsible_id,
  },
  ['deal_id', 'title'],
);

export const listCasesQuery = listQuerySchema(CASE_SORT_FIELDS, {
  status,
  phase: s.text(100),
  priority,
  area: s.text(),
  client_id: id,
  responsible_id: id,
  from: s.date(),
  to: s.date(),
  search: s.text(200),
});

export const caseActivitiesQuery = listQuerySchema(['due_date', 'created_at', 'updated_at', 'priority']);

export const timelineQuery = s.typed<{ limit: number }>({
  type: 'object',
  properties: {
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: 100,
      default: 50,
      'x-message': 'limit must be an integer from 1 to 100',
    },
  },
});

export type CreateCaseBody = s.Static<typeof createCaseBody>;
export type UpdateCaseBody = s.Static<typeof updateCaseBody>;
export type CaseListQuery = s.Static<typeof listCasesQuery>;

const { string, nullableString, integer } = s.out;

const common = {
  id: string,
  title: string,
  number: nullableString,
  area: nullableString,
  subject: nullableString,
  phase: string,
  priority: string,
  status: string,
  sla_date: nullableString,
  activities_count: integer,
  documents_count: integer,
  created_at: string,
  updated_at: string,
};

/** What a case number says (Resolução CNJ 65/2008), null without a number. */
const numberInfo = s.named(
  'CaseNumberInfo',
  'What a case number says (Resolução CNJ 65/2008); null without a number.',
  {
    type: ['object', 'null'],
    properties: {
      format: { type: 'string', enum: ['cnj', 'internal'] },
      valid: { type: ['boolean', 'null'] },
      year: { type: ['integer', 'null'] },
      justice: {
        type: ['string', 'null'],
        enum: ['STF', 'CNJ', 'STJ', 'federal', 'labour', 'electoral', 'military', 'state', 'state military', null],
      },
      court: nullableString,
      origin: nullableString,
    },
    examples: [
      { format: 'cnj', valid: true, year: 2023, justice: 'state', court: 'TJSP', origin: '0100' },
      { format: 'internal', valid: null, year: null, justice: null, court: null, origin: null },
    ],
  },
);

const caseDetail = s.named(
  'Case',
  'A case in its detail read shape.',
  s.shape({
    ...common,
    number_info: numberInfo,
    client: s.nullableShape({
      id: string,
      name: nullableString,
      type: nullableString,
      email: nullableString,
      phone: nullableString,
    }),
    responsible: contactLink,
    ...describedShape,
    archived_at: nullableString,
  }),
);

const caseWritten = s.shape({ ...common, ...ownerIds, ...describedShape, archived_at: nullableString });

const { created: caseCreated, changes: caseChanges } = writtenShapes(
  'Case',
  'case',
  caseWritten,
  'id, title, the fields sent (normalized) and updated_at.',
);

const caseListItem = listItemShape('Case', 'A case', { ...common, client: listedClient, responsible: nameLink });

const caseActivity = s.named(
  'CaseActivityListItem',
  "An activity in a case's list.",
  s.shape({
    id: string,
    type: string,
    title: string,
    status: string,
    priority: nullableString,
    due_date: nullableString,
    completed_at: nullableString,
    created_at: string,
  }),
);

const timelineEvent = s.named(
  'TimelineEvent',
  'An event of a case timeline.',
  s.shape({
    id: string,
    type: string,
    description: string,
    user: nameLink,
    created_at: string,
  }),
);

export type CaseDetail = s.Static<typeof caseDetail>;
export type CaseCreated = s.Static<typeof caseCreated>;
export type CaseListItem = s.Static<typeof caseListItem>;

const caseArchived = stampedStatus('CaseArchived', 'An archived case.', 'archived_at');
export type CaseArchived = s.Static<typeof caseArchived>;
export type TimelineEvent = s.Static<typeof timelineEvent>;

export const responses = {
  ...recordResponses({ detail: caseDetail, created: caseCreated, changes: caseChanges, listItem: caseListItem }),
  archived: s.okResponse(200, caseArchived),
  timeline: s.okResponse(200, { type: 'array', items: timelineEvent }),
  activities: s.pageResponse(caseActivity),
};

/** The contract of the record routes (shared/src/service/record-routes.ts): the DELETE archives the case. */
export const recordContract = {
  schemas: { list: listCasesQuery, create: createCaseBody, update: updateCaseBody },
  responses: { ...responses, removed: responses.archived },
};
