import {
  date,
  enumOf,
  longText,
  metadata,
  name,
  named,
  nullable,
  object,
  okResponse,
  out,
  pageResponse,
  shape,
  nullableShape,
  stringList,
  text,
  typed,
  type Static,
} from '@lpm/shared/http/schemas';
import { listQuerySchema } from '@lpm/shared/http/pagination';
import { nameLink } from '@lpm/shared/http/common-schemas';

export const CASE_PRIORITIES = ['alta', 'media', 'baixa'] as const;
export const CASE_STATUSES = ['ativo', 'arquivado'] as const;

export const CASE_SORT_FIELDS = ['created_at', 'updated_at', 'title', 'priority', 'sla_date'] as const;

const id = text(100);
const priority = enumOf(CASE_PRIORITIES, 'Invalid priority');
const status = enumOf(CASE_STATUSES, 'Invalid status');

const caseFields = {
  title: name(),
  /** Any text; a CNJ number (NNNNNNN-DD.AAAA.J.TR.OOOO, or its 20 digits) is stored masked and explained in number_info. */
  number: nullable(text(100, { examples: ['0001234-56.2023.8.26.0100', '00012345620238260100', 'INT-2024/017'] })),
  area: nullable(text()),
  subject: nullable(text()),
  // Checked against the team's kanban in the domain (400 Invalid phase).
  phase: text(100, { 'x-message': 'Invalid phase' }),
  priority,
  client_id: nullable(id),
  responsible_id: nullable(id),
  sla_date: nullable(date()),
  description: nullable(longText()),
  labels: nullable(stringList()),
  metadata: nullable(metadata()),
};

export const createCaseBody = named(
  'CreateCaseRequest',
  'A new case: only the title is required.',
  object(caseFields, ['title']),
);
export const updateCaseBody = named(
  'UpdateCaseRequest',
  'Any subset of the case fields; status moves ativo <-> arquivado.',
  object({ ...caseFields, status }),
);

/** What the deals service asks for the case of a won deal: the deal, and the case's fields. */
export const dealCaseBody = object(
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
  phase: text(100),
  priority,
  area: text(),
  client_id: id,
  responsible_id: id,
  from: date(),
  to: date(),
  search: text(200),
});

export const caseActivitiesQuery = listQuerySchema(['due_date', 'created_at', 'updated_at', 'priority']);

export const timelineQuery = typed<{ limit: number }>({
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

export type CreateCaseBody = Static<typeof createCaseBody>;
export type UpdateCaseBody = Static<typeof updateCaseBody>;
export type CaseListQuery = Static<typeof listCasesQuery>;

const { string, nullableString, integer, strings, freeObject } = out;

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
const numberInfo = named('CaseNumberInfo', 'What a case number says (Resolução CNJ 65/2008); null without a number.', {
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
});

const caseDetail = named(
  'Case',
  'A case in its detail read shape.',
  shape({
    ...common,
    number_info: numberInfo,
    client: nullableShape({
      id: string,
      name: nullableString,
      type: nullableString,
      email: nullableString,
      phone: nullableString,
    }),
    responsible: nullableShape({ id: string, name: nullableString, email: nullableString }),
    description: nullableString,
    labels: strings,
    metadata: freeObject,
    archived_at: nullableString,
  }),
);

const caseWritten = shape({
  ...common,
  client_id: nullableString,
  responsible_id: nullableString,
  description: nullableString,
  labels: strings,
  metadata: freeObject,
  archived_at: nullableString,
});

const caseCreated = named('CaseCreated', 'A created case: links as flat ids.', caseWritten);
const caseChanges = named('CaseChanges', 'id, title, the fields sent (normalized) and updated_at.', caseWritten, {
  partial: true,
});

const caseListItem = named(
  'CaseListItem',
  'A case in a list.',
  shape({
    ...common,
    client: nullableShape({ id: string, name: nullableString, type: nullableString }),
    responsible: nameLink,
  }),
);

const caseActivity = named(
  'CaseActivityListItem',
  "An activity in a case's list.",
  shape({
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

const timelineEvent = named(
  'TimelineEvent',
  'An event of a case timeline.',
  shape({
    id: string,
    type: string,
    description: string,
    user: nameLink,
    created_at: string,
  }),
);

export type CaseDetail = Static<typeof caseDetail>;
export type CaseCreated = Static<typeof caseCreated>;
export type CaseListItem = Static<typeof caseListItem>;

const caseArchived = named(
  'CaseArchived',
  'An archived case.',
  shape({ id: string, status: string, archived_at: nullableString }),
);
export type CaseArchived = Static<typeof caseArchived>;
export type TimelineEvent = Static<typeof timelineEvent>;

export const responses = {
  detail: okResponse(200, caseDetail),
  created: okResponse(201, caseCreated),
  /** id, the fields sent, title and updated_at. */
  updated: okResponse(200, caseChanges),
  archived: okResponse(200, caseArchived),
  list: pageResponse(caseListItem),
  timeline: okResponse(200, { type: 'array', items: timelineEvent }),
  activities: pageResponse(caseActivity),
};
