import { date, email, enumOf, longText, metadata, name, nullable, object, okResponse, out, pageResponse, shape, stringList, text, typed, type Static } from '@lpm/shared/http/schemas';
import { listQuerySchema } from '@lpm/shared/http/pagination';
import { CLIENT_TYPES, GENDERS, SEGMENTS, STATUSES, ADDRESS_PARTS, PF_FIELDS, PJ_FIELDS } from '../domain/client-shape.ts';

const CPF = '^\\d{3}\\.\\d{3}\\.\\d{3}-\\d{2}$';
// Since July 2026 the first 12 positions of a CNPJ may be letters; the check digits stay numeric.
const CNPJ = '^[0-9A-Za-z]{2}\\.[0-9A-Za-z]{3}\\.[0-9A-Za-z]{3}/[0-9A-Za-z]{4}-\\d{2}$';

const part = () => nullable(text());
const address = nullable(
  object({ street: part(), number: part(), complement: part(), neighborhood: part(), city: part(), state: part(), zip_code: part(), country: part() }),
);

const phone = text(40);

/** Every field a client can be created with; which of PF/PJ applies is checked against `type`. */
const clientFields = {
  name: name(),
  email: nullable(email()),
  phone: nullable(phone),
  whatsapp: nullable(phone),
  segment: nullable(enumOf(SEGMENTS, 'Invalid segment')),
  address,
  notes: nullable(longText()),
  tags: nullable(stringList()),
  metadata: nullable(metadata()),
  cpf: nullable(typed<string>({ type: 'string', pattern: CPF, 'x-message': 'Invalid CPF format' })),
  rg: nullable(text(40)),
  birth_date: nullable(date()),
  gender: nullable(enumOf(GENDERS, 'Invalid gender')),
  marital_status: nullable(text(100)),
  nationality: nullable(text(100)),
  profession: nullable(text(200)),
  legal_name: nullable(name()),
  trade_name: nullable(name()),
  cnpj: nullable(typed<string>({ type: 'string', pattern: CNPJ, 'x-message': 'Invalid CNPJ format' })),
  state_registration: nullable(text(40)),
  contact_person: nullable(text(500)),
};

export const createClientBody = object(
  { type: enumOf(CLIENT_TYPES, 'Invalid type'), ...clientFields },
  ['type', 'name'],
);

export const updateClientBody = object({
  type: enumOf(CLIENT_TYPES, 'Invalid type'),
  status: enumOf(STATUSES, 'Invalid status'),
  ...clientFields,
});

export const clientIdParams = object({ id: typed<string>({ type: 'string', maxLength: 100 }) }, ['id']);

export const listClientsQuery = listQuerySchema(['created_at', 'updated_at', 'name'], {
  type: enumOf(CLIENT_TYPES, 'Invalid type'),
  status: enumOf(STATUSES, 'Invalid status'),
  segment: enumOf(SEGMENTS, 'Invalid segment'),
  search: text(200),
});

export type CreateClientBody = Static<typeof createClientBody>;
export type UpdateClientBody = Static<typeof updateClientBody>;
export type ClientListQuery = Static<typeof listClientsQuery>;

export const clientCasesQuery = listQuerySchema(['created_at', 'updated_at', 'title', 'priority', 'sla_date']);

const { string, nullableString, integer, strings, freeObject } = out;
const documentFields = Object.fromEntries([...PF_FIELDS, ...PJ_FIELDS].map((f) => [f, nullableString]));

/** The detail read shape; a PF client has the PF fields, a PJ client the PJ ones. */
const clientDetail = shape({
  id: string,
  type: string,
  name: string,
  email: nullableString,
  phone: nullableString,
  whatsapp: nullableString,
  segment: nullableString,
  status: string,
  ...documentFields,
  address: { type: ['object', 'null'], properties: Object.fromEntries(ADDRESS_PARTS.map((p) => [p, nullableString])) },
  notes: nullableString,
  tags: strings,
  metadata: freeObject,
  cases_count: integer,
  deactivated_at: nullableString,
  created_at: string,
  updated_at: string,
});

const clientListItem = shape({
  id: string,
  type: string,
  name: string,
  email: nullableString,
  phone: nullableString,
  cpf: nullableString,
  cnpj: nullableString,
  segment: nullableString,
  status: string,
  cases_count: integer,
  created_at: string,
});

const clientCaseItem = shape({
  id: string,
  title: string,
  number: nullableString,
  area: nullableString,
  phase: string,
  priority: string,
  status: string,
  created_at: string,
});

export const responses = {
  detail: okResponse(200, clientDetail),
  created: okResponse(201, clientDetail),
  /** id, the fields sent (any of the detail's) and updated_at. */
  updated: okResponse(200, clientDetail),
  deactivated: okResponse(200, shape({ id: string, status: string, deactivated_at: nullableString })),
  list: pageResponse(clientListItem),
  cases: pageResponse(clientCaseItem),
};
