import * as s from '@lpm/shared/http/schemas';
import { listQuerySchema } from '@lpm/shared/http/pagination';
import { recordResponses, stampedStatus } from '@lpm/shared/http/record-responses';

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

const part = () => s.nullable(s.text());
const address = s.nullable(
  s.object({
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

const phone = s.text(40);

/** Every field a client can be created with; which of PF/PJ applies is checked against `type`. */
const clientFields = {
  name: s.name(),
  email: s.nullable(s.email()),
  phone: s.nullable(phone),
  whatsapp: s.nullable(phone),
  segment: s.nullable(s.enumOf(SEGMENTS, 'Invalid segment')),
  address,
  notes: s.nullable(s.longText()),
  tags: s.nullable(s.stringList()),
  metadata: s.nullable(s.metadata()),
  cpf: s.nullable(s.typed<string>({ type: 'string', pattern: CPF, 'x-message': 'Invalid CPF format' })),
  rg: s.nullable(s.text(40)),
  birth_date: s.nullable(s.date()),
  gender: s.nullable(s.enumOf(GENDERS, 'Invalid gender')),
  marital_status: s.nullable(s.text(100)),
  nationality: s.nullable(s.text(100)),
  profession: s.nullable(s.text(200)),
  legal_name: s.nullable(s.name()),
  trade_name: s.nullable(s.name()),
  cnpj: s.nullable(s.typed<string>({ type: 'string', pattern: CNPJ, 'x-message': 'Invalid CNPJ format' })),
  state_registration: s.nullable(s.text(40)),
  contact_person: s.nullable(s.text(500)),
};

export const createClientBody = s.named(
  'CreateClientRequest',
  'A new client: type and name are required; the PF fields go with type PF, the PJ fields with type PJ.',
  s.object({ type: s.enumOf(CLIENT_TYPES, 'Invalid type'), ...clientFields }, ['type', 'name']),
);

export const updateClientBody = s.named(
  'UpdateClientRequest',
  'Any subset of the client fields; status active reactivates, inactive deactivates.',
  s.object({
    type: s.enumOf(CLIENT_TYPES, 'Invalid type'),
    status: s.enumOf(STATUSES, 'Invalid status'),
    ...clientFields,
  }),
);

export const listClientsQuery = listQuerySchema(['created_at', 'updated_at', 'name'], {
  type: s.enumOf(CLIENT_TYPES, 'Invalid type'),
  status: s.enumOf(STATUSES, 'Invalid status'),
  segment: s.enumOf(SEGMENTS, 'Invalid segment'),
  search: s.text(200),
});

export type CreateClientBody = s.Static<typeof createClientBody>;
export type UpdateClientBody = s.Static<typeof updateClientBody>;
export type ClientListQuery = s.Static<typeof listClientsQuery>;

export const clientCasesQuery = listQuerySchema(['created_at', 'updated_at', 'title', 'priority', 'sla_date']);

const { string, nullableString, integer, strings, freeObject } = s.out;
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
  address: s.named('Address', 'A postal address; every part may be null.', {
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

const clientPF = s.named(
  'ClientPF',
  'An individual, with a CPF.',
  s.shape({ ...clientFieldsOut, type: s.typed<'PF'>({ type: 'string', enum: ['PF'] }), ...nullableStrings(PF_FIELDS) }),
);
const clientPJ = s.named(
  'ClientPJ',
  'A company, with a CNPJ.',
  s.shape({ ...clientFieldsOut, type: s.typed<'PJ'>({ type: 'string', enum: ['PJ'] }), ...nullableStrings(PJ_FIELDS) }),
);
export type ClientPF = s.Static<typeof clientPF>;
export type ClientPJ = s.Static<typeof clientPJ>;

/** The detail read shape: a PF client has the PF fields, a PJ client the PJ ones. */
const clientDetail = s.named(
  'Client',
  'An individual (PF) or a company (PJ), told apart by `type`.',
  s.typed<ClientPF | ClientPJ>({ type: 'object', oneOf: [clientPF, clientPJ] }),
);
export type ClientDetail = s.Static<typeof clientDetail>;

/** id, the fields sent (any of the detail's) and updated_at. */
const clientChanges = s.named(
  'ClientChanges',
  'id, the fields sent (normalized) and updated_at.',
  s.shape({ ...clientFieldsOut, type: string, ...nullableStrings([...PF_FIELDS, ...PJ_FIELDS]) }),
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
const clientListItem = s.named(
  'ClientListItem',
  'A client in a list: cpf for PF, cnpj for PJ.',
  s.shape(listItemFields),
  {
    required: Object.keys(listItemFields).filter((f) => f !== 'cpf' && f !== 'cnpj'),
  },
);
type ListItemFields = s.ShapeOf<typeof listItemFields>;
/** A list item has the cpf of a PF client or the cnpj of a PJ one. */
export type ClientListItem = Omit<ListItemFields, 'cpf' | 'cnpj'> & Partial<Pick<ListItemFields, 'cpf' | 'cnpj'>>;

const clientCaseItem = s.named(
  'ClientCaseListItem',
  "A case in a client's list of cases.",
  s.shape({
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

const clientDeactivated = stampedStatus('ClientDeactivated', 'A deactivated client.', 'deactivated_at');
export type ClientDeactivated = s.Static<typeof clientDeactivated>;

export const responses = {
  ...recordResponses({ detail: clientDetail, created: clientDetail, changes: clientChanges, listItem: clientListItem }),
  deactivated: s.okResponse(200, clientDeactivated),
  cases: s.pageResponse(clientCaseItem),
};

/** The contract of the record routes (shared/src/service/record-routes.ts): the DELETE deactivates the client. */
export const recordContract = {
  schemas: { list: listClientsQuery, create: createClientBody, update: updateClientBody },
  responses: { ...responses, removed: responses.deactivated },
};
