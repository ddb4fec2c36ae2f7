import {
  date,
  email,
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
  stringList,
  text,
  typed,
  type ShapeOf,
  type Static,
} from '@lpm/shared/http/schemas';
import { listQuerySchema } from '@lpm/shared/http/pagination';

export const CLIENT_TYPES = ['PF', 'PJ'] as const;
export const SEGMENTS = ['vip', 'premium', 'regular', 'occasional'] as const;
export const STATUSES = ['active', 'inactive'] as const;
export const GENDERS = ['masculino', 'feminino', 'outro'] as const;
export const PF_FIELDS = ['cpf', 'rg', 'birth_date', 'gender', 'marital_status', 'nationality', 'profession'] as const;
export const PJ_FIELDS = ['legal_name', 'trade_name', 'cnpj', 'state_registration', 'contact_person'] as const;
export const ADDRESS_PARTS = [
  'street',
  'number',
  'complement',
  'neighborhood',
  'city',
  'state',
  'zip_code',
  'country',
] as const;

const CPF = '^\\d{3}\\.\\d{3}\\.\\d{3}-\\d{2}$';
// Since July 2026 the first 12 positions of a CNPJ may be letters; the check digits stay numeric.
const CNPJ = '^[0-9A-Za-z]{2}\\.[0-9A-Za-z]{3}\\.[0-9A-Za-z]{3}/[0-9A-Za-z]{4}-\\d{2}$';

const part = () => nullable(text());
const address = nullable(
  object({
    street: part(),
    number: part(),
    complement: part(),
    neighborhood: part(),
    city: part(),
    state: part(),
    zip_code: part(),
    country: part(),
  }),
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

export const createClientBody = named(
  'CreateClientRequest',
  'A new client: type and name are required; the PF fields go with type PF, the PJ fields with type PJ.',
  object({ type: enumOf(CLIENT_TYPES, 'Invalid type'), ...clientFields }, ['type', 'name']),
);

export const updateClientBody = named(
  'UpdateClientRequest',
  'Any subset of the client fields; status active reactivates, inactive deactivates.',
  object({
    type: enumOf(CLIENT_TYPES, 'Invalid type'),
    status: enumOf(STATUSES, 'Invalid status'),
    ...clientFields,
  }),
);

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
const nullableStrings = <F extends string>(fields: readonly F[]) =>
  Object.fromEntries(fields.map((f) => [f, nullableString])) as Record<F, typeof nullableString>;

const clientFieldsOut = {
  id: string,
  name: string,
  email: nullableString,
  phone: nullableString,
  whatsapp: nullableString,
  segment: nullableString,
  status: string,
  address: named('Address', 'A postal address; every part may be null.', {
    type: ['object', 'null'],
    properties: nullableStrings(ADDRESS_PARTS),
  }),
  notes: nullableString,
  tags: strings,
  metadata: freeObject,
  cases_count: integer,
  deactivated_at: nullableString,
  created_at: string,
  updated_at: string,
};

const clientPF = named(
  'ClientPF',
  'An individual, with a CPF.',
  shape({ ...clientFieldsOut, type: typed<'PF'>({ type: 'string', enum: ['PF'] }), ...nullableStrings(PF_FIELDS) }),
);
const clientPJ = named(
  'ClientPJ',
  'A company, with a CNPJ.',
  shape({ ...clientFieldsOut, type: typed<'PJ'>({ type: 'string', enum: ['PJ'] }), ...nullableStrings(PJ_FIELDS) }),
);
export type ClientPF = Static<typeof clientPF>;
export type ClientPJ = Static<typeof clientPJ>;

/** The detail read shape: a PF client has the PF fields, a PJ client the PJ ones. */
const clientDetail = named(
  'Client',
  'An individual (PF) or a company (PJ), told apart by `type`.',
  typed<ClientPF | ClientPJ>({ type: 'object', oneOf: [clientPF, clientPJ] }),
);
export type ClientDetail = Static<typeof clientDetail>;

/** id, the fields sent (any of the detail's) and updated_at. */
const clientChanges = named(
  'ClientChanges',
  'id, the fields sent (normalized) and updated_at.',
  shape({ ...clientFieldsOut, type: string, ...nullableStrings([...PF_FIELDS, ...PJ_FIELDS]) }),
  { partial: true },
);

const listItemFields = {
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
};
const clientListItem = named('ClientListItem', 'A client in a list: cpf for PF, cnpj for PJ.', shape(listItemFields), {
  required: Object.keys(listItemFields).filter((f) => f !== 'cpf' && f !== 'cnpj'),
});
type ListItemFields = ShapeOf<typeof listItemFields>;
/** A list item has the cpf of a PF client or the cnpj of a PJ one. */
export type ClientListItem = Omit<ListItemFields, 'cpf' | 'cnpj'> & Partial<Pick<ListItemFields, 'cpf' | 'cnpj'>>;

const clientCaseItem = named(
  'ClientCaseListItem',
  "A case in a client's list of cases.",
  shape({
    id: string,
    title: string,
    number: nullableString,
    area: nullableString,
    phase: string,
    priority: string,
    status: string,
    created_at: string,
  }),
);

const clientDeactivated = named(
  'ClientDeactivated',
  'A deactivated client.',
  shape({ id: string, status: string, deactivated_at: nullableString }),
);
export type ClientDeactivated = Static<typeof clientDeactivated>;

export const responses = {
  detail: okResponse(200, clientDetail),
  created: okResponse(201, clientDetail),
  updated: okResponse(200, clientChanges),
  deactivated: okResponse(200, clientDeactivated),
  list: pageResponse(clientListItem),
  cases: pageResponse(clientCaseItem),
};
