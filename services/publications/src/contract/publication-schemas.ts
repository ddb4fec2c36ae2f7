// The request and response schemas of /v1/publications: the one source of each shape.
import { listQuerySchema } from '@lpm/shared/http/pagination';
import {
  arrayOf,
  date,
  errorResponses,
  enumOf,
  integer,
  named,
  nullable,
  nullableShape,
  object,
  okResponse,
  out,
  pageResponse,
  shape,
  text,
  typed,
  type Static,
} from '@lpm/shared/http/schemas';

export const PUBLICATION_STATUSES = ['new', 'treated', 'dismissed'] as const;
export type PublicationStatus = (typeof PUBLICATION_STATUSES)[number];
export const PUBLICATION_SORT_FIELDS = ['made_available_date', 'created_at'] as const;

const id = typed<string>({ type: 'string', maxLength: 100 });

export const listPublicationsQuery = listQuerySchema(PUBLICATION_SORT_FIELDS, {
  status: enumOf(PUBLICATION_STATUSES, 'Invalid status'),
  case_id: id,
  matched: enumOf(['true', 'false'] as const, 'matched must be true or false'),
  court: text(30),
  from: date(),
  to: date(),
  search: text(200),
});
export type ListPublicationsQuery = Static<typeof listPublicationsQuery>;

const updateFields = object({
  status: enumOf(PUBLICATION_STATUSES, 'Invalid status'),
  case_id: nullable(id),
  deadline_days: integer({ minimum: 1, maximum: 365, 'x-message': 'deadline_days must be an integer from 1 to 365' }),
});

export const updatePublicationBody = {
  ...named(
    'UpdatePublicationRequest',
    'Any of: the status, a case to link by hand (null unlinks), the days of its deadline.',
    updateFields,
  ),
  minProperties: 1,
  'x-message': 'No fields to update',
} as typeof updateFields;
export type UpdatePublicationBody = Static<typeof updatePublicationBody>;

const trailDay = shape({ date: out.string, counted: out.boolean, reason: out.nullableString });

export const deadlineShape = nullableShape({
  start_date: out.string,
  due_date: out.string,
  days: out.integer,
  counting: out.string,
  trail: arrayOf(trailDay),
});

export const publicationShape = named(
  'Publication',
  "A publication of the DJEN for one of the team's watched lawyers.",
  shape({
    id: out.string,
    djen_id: out.integer,
    hash: out.string,
    made_available_date: out.string,
    publication_date: out.nullableString,
    court: out.string,
    organ: out.nullableString,
    kind: out.nullableString,
    document_type: out.nullableString,
    class: nullableShape({ code: out.nullableString, name: out.nullableString }),
    case_number: out.nullableString,
    text: out.string,
    text_plain: out.string,
    link: out.nullableString,
    active: out.boolean,
    recipients: arrayOf(shape({ name: out.string, side: out.nullableString })),
    lawyers: arrayOf(shape({ name: out.string, oab_number: out.string, oab_uf: out.string })),
    case_id: out.nullableString,
    status: out.string,
    deadline: deadlineShape,
    activity_id: out.nullableString,
    created_at: out.string,
    updated_at: out.string,
  }),
);
export type PublicationView = Static<typeof publicationShape>;

export const responses = {
  list: pageResponse(publicationShape),
  detail: okResponse(200, publicationShape),
  sync: {
    202: {
      type: 'object',
      required: ['success', 'data'],
      properties: { success: { type: 'boolean', const: true }, data: shape({ started: out.boolean }) },
    },
    ...errorResponses,
  },
};
