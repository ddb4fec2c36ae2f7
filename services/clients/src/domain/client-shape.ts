// Field sets of PF and PJ clients and the read shapes built from a stored record.
import { exact } from '@lpm/shared/http/schemas';
import { foldText } from '@lpm/shared/text';
import { iso } from '@lpm/shared/time';
import type { Address, ClientRecord } from '../data/client-entity.ts';
import {
  PF_FIELDS,
  PJ_FIELDS,
  type CLIENT_TYPES,
  type ClientDetail,
  type ClientListItem,
  type ClientPF,
  type ClientPJ,
} from '../contract/client-schemas.ts';

export const COMMON_FIELDS = [
  'name',
  'email',
  'phone',
  'whatsapp',
  'segment',
  'address',
  'notes',
  'tags',
  'metadata',
] as const;

export type ClientType = (typeof CLIENT_TYPES)[number];

/** The fields only one type of client has. */
type TypeField = (typeof PF_FIELDS)[number] | (typeof PJ_FIELDS)[number];

export const fieldsOfType = (type: ClientType): readonly TypeField[] => (type === 'PF' ? PF_FIELDS : PJ_FIELDS);
export const fieldsOfOtherType = (type: ClientType): readonly TypeField[] => (type === 'PF' ? PJ_FIELDS : PF_FIELDS);

export function completeAddress(a: Partial<Address> | null | undefined): Address | null {
  if (!a) return null;
  const { street, number, complement, neighborhood, city, state, zip_code, country } = a;
  return {
    street: street ?? null,
    number: number ?? null,
    complement: complement ?? null,
    neighborhood: neighborhood ?? null,
    city: city ?? null,
    state: state ?? null,
    zip_code: zip_code ?? null,
    country: country ?? null,
  };
}

/** Document without punctuation: CPF digits, CNPJ characters in upper case. */
export const bareDocument = (doc: string) => doc.replace(/[^0-9A-Za-z]/g, '').toUpperCase();

export function documentKey(r: Pick<ClientRecord, '_id' | 'type' | 'cpf' | 'cnpj'>): string {
  const doc = r.type === 'PF' ? r.cpf : r.cnpj;
  return doc ? `${r.type === 'PF' ? 'cpf' : 'cnpj'}:${bareDocument(doc)}` : `none:${r._id}`;
}

/** The derived fields kept in step with the record on every write. */
export function derivedFields(
  r: Pick<ClientRecord, '_id' | 'type' | 'name' | 'email' | 'cpf' | 'cnpj'>,
): Pick<ClientRecord, 'search_text' | 'document_digits' | 'name_sort' | 'document_key'> {
  const doc = r.type === 'PF' ? r.cpf : r.cnpj;
  return {
    search_text: foldText([r.name, r.email, doc].filter(Boolean).join(' | ')),
    document_digits: doc ? bareDocument(doc).toLowerCase() : null,
    name_sort: foldText(r.name),
    document_key: documentKey(r),
  };
}

/** The PF or the PJ fields of a client (null when not set). */
const typeFields = <F extends TypeField>(r: ClientRecord, fields: readonly F[]) =>
  Object.fromEntries(fields.map((f) => [f, r[f] ?? null])) as Record<F, string | null>;

const contact = (r: ClientRecord) => ({
  name: r.name,
  email: r.email,
  phone: r.phone,
  whatsapp: r.whatsapp,
  segment: r.segment,
  status: r.status,
});

const described = (r: ClientRecord, casesCount: number) => ({
  address: completeAddress(r.address),
  notes: r.notes,
  tags: r.tags ?? [],
  metadata: r.metadata ?? {},
  cases_count: casesCount,
  deactivated_at: iso(r.deactivated_at),
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

export function detailShape(r: ClientRecord, casesCount: number): ClientDetail {
  return r.type === 'PF'
    ? exact<ClientPF>()({
        id: r._id,
        type: 'PF',
        ...contact(r),
        ...typeFields(r, PF_FIELDS),
        ...described(r, casesCount),
      })
    : exact<ClientPJ>()({
        id: r._id,
        type: 'PJ',
        ...contact(r),
        ...typeFields(r, PJ_FIELDS),
        ...described(r, casesCount),
      });
}

export function listItemShape(r: ClientRecord, casesCount: number): ClientListItem {
  return exact<ClientListItem>()({
    id: r._id,
    type: r.type,
    name: r.name,
    email: r.email,
    phone: r.phone,
    ...(r.type === 'PF' ? { cpf: r.cpf } : { cnpj: r.cnpj }),
    segment: r.segment,
    status: r.status,
    cases_count: casesCount,
    created_at: iso(r.created_at),
  });
}
