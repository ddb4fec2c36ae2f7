// The request and response schemas of /v1/publications: the one source of each shape.
import { listQuerySchema } from '@lpm/shared/http/pagination';
import * as s from '@lpm/shared/http/schemas';

export const PUBLICATION_STATUSES = ['new', 'treated', 'dismissed'] as const;
export type PublicationStatus = (typeof PUBLICATION_STATUSES)[number];
export const PUBLICATION_SORT_FIELDS = ['made_available_date', 'created_at'] as const;

const id = s.typed<string>({ type: 'string', maxLength: 100 });

export const listPublicationsQuery = listQuerySchema(PUBLICATION_SORT_FIELDS, {
  status: s.enumOf(PUBLICATION_STATUSES, 'Invalid status'),
  case_id: id,
  matched: s.enumOf(['true', 'false'] as const, 'matched must be true or false'),
  court: s.text(30),
  from: s.date(),
  to: s.date(),
  search: s.text(200),
});
export type ListPublicationsQuery = s.Static<typeof listPublicationsQuery>;

const updateFields = s.object({
  status: s.enumOf(PUBLICATION_STATUSES, 'Invalid status'),
  case_id: s.nullable(id),
  deadline_days: s.integer({ minimum: 1, maximum: 365, 'x-message': 'deadline_days must be an integer from 1 to 365' }),
});

export const updatePublicationBody = {
  ...s.named(
    'UpdatePublicationRequest',
    'Any of: the status, a case to link by hand (null unlinks), the days of its deadline.',
    updateFields,
  ),
  minProperties: 1,
  'x-message': 'No fields to update',
} as typeof updateFields;
export type UpdatePublicationBody = s.Static<typeof updatePublicationBody>;

const trailDay = s.shape({ date: s.out.string, counted: s.out.boolean, reason: s.out.nullableString });

export const deadlineShape = s.nullableShape({
  start_date: s.out.string,
  due_date: s.out.string,
  days: s.out.integer,
  counting: s.out.string,
  trail: s.arrayOf(trailDay),
});

export const publicationShape = s.named(
  'Publication',
  "A publication of the DJEN for one of the team's watched lawyers.",
  s.shape({
    id: s.out.string,
    djen_id: s.out.integer,
    hash: s.out.string,
    made_available_date: s.out.string,
    publication_date: s.out.nullableString,
    court: s.out.string,
    organ: s.out.nullableString,
    kind: s.out.nullableString,
    document_type: s.out.nullableString,
    class: s.nullableShape({ code: s.out.nullableString, name: s.out.nullableString }),
    case_number: s.out.nullableString,
    text: s.out.string,
    text_plain: s.out.string,
    link: s.out.nullableString,
    active: s.out.boolean,
    recipients: s.arrayOf(s.shape({ name: s.out.string, side: s.out.nullableString })),
    lawyers: s.arrayOf(s.shape({ name: s.out.string, oab_number: s.out.string, oab_uf: s.out.string })),
    case_id: s.out.nullableString,
    status: s.out.string,
    deadline: deadlineShape,
    activity_id: s.out.nullableString,
    created_at: s.out.string,
    updated_at: s.out.string,
  }),
);
export type PublicationView = s.Static<typeof publicationShape>;

export const responses = {
  list: s.pageResponse(publicationShape),
  detail: s.okResponse(200, publicationShape),
  sync: s.okResponse(202, s.shape({ started: s.out.boolean })),
};
