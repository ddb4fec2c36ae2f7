import { p } from '@mikro-orm/mongodb';
import { nullableStrings } from '@lpm/shared/store/entity-properties';
import { storedEntity } from '@lpm/shared/store/entities';
import type { RecordOf } from '@lpm/shared/store/orm';
import { PF_FIELDS, PJ_FIELDS } from '../contract/client-schemas.ts';

export interface Address {
  street: string | null;
  number: string | null;
  complement: string | null;
  neighborhood: string | null;
  city: string | null;
  state: string | null;
  zip_code: string | null;
  country: string | null;
}

export const ClientEntity = storedEntity('Client', 'clients', {
  properties: {
    type: p.enum(['PF', 'PJ'] as const),
    name: p.string(),
    email: p.string().strictNullable(),
    phone: p.string().strictNullable(),
    whatsapp: p.string().strictNullable(),
    segment: p.string().strictNullable(),
    status: p.enum(['active', 'inactive'] as const),
    address: p.json<Address>().strictNullable(),
    notes: p.string().strictNullable(),
    tags: p.json<string[]>(),
    metadata: p.json<Record<string, unknown>>(),
    // The particulars of an individual (PF) and of a company (PJ): a client has those of its type.
    ...nullableStrings(...PF_FIELDS, ...PJ_FIELDS),
    deactivated_at: p.datetime().strictNullable(),
    // The cases service's count of the client's cases and when it was asked
    // (domain/clients.ts): absent on records stored before counts were kept.
    cases_count: p.integer().nullable(),
    cases_counted_at: p.datetime().nullable(),
    // Derived, for search and sorting without collation (FerretDB has none).
    search_text: p.string(),
    document_digits: p.string().strictNullable(),
    name_sort: p.string(),
    // Unique per team: "cpf:<digits>", "cnpj:<chars>", or "none:<id>" when there is no document.
    document_key: p.string(),
  },
  indexes: [
    { properties: ['team_id', 'created_at'] },
    { properties: ['team_id', 'updated_at'] },
    { properties: ['team_id', 'name_sort'] },
    { properties: ['team_id', 'status', 'created_at'] },
  ],
  uniques: [{ properties: ['team_id', 'document_key'] }],
});

export type ClientRecord = RecordOf<typeof ClientEntity>;
