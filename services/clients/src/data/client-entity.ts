import { defineEntity, p } from '@mikro-orm/mongodb';
import type { DomainEvent } from '@lpm/shared/events';

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

export const ClientEntity = defineEntity({
  name: 'Client',
  collection: 'clients',
  properties: {
    _id: p.string().primary(),
    team_id: p.string(),
    type: p.string(),
    name: p.string(),
    email: p.string().nullable(),
    phone: p.string().nullable(),
    whatsapp: p.string().nullable(),
    segment: p.string().nullable(),
    status: p.string(),
    address: p.json<Address>().nullable(),
    notes: p.string().nullable(),
    tags: p.json<string[]>(),
    metadata: p.json<Record<string, unknown>>(),
    cpf: p.string().nullable(),
    rg: p.string().nullable(),
    birth_date: p.string().nullable(),
    gender: p.string().nullable(),
    marital_status: p.string().nullable(),
    nationality: p.string().nullable(),
    profession: p.string().nullable(),
    legal_name: p.string().nullable(),
    trade_name: p.string().nullable(),
    cnpj: p.string().nullable(),
    state_registration: p.string().nullable(),
    contact_person: p.string().nullable(),
    deactivated_at: p.datetime().nullable(),
    created_at: p.datetime(),
    updated_at: p.datetime(),
    version: p.integer(),
    // Derived, for search and sorting without collation (FerretDB has none).
    search_text: p.string(),
    document_digits: p.string().nullable(),
    name_sort: p.string(),
    // Unique per team: "cpf:<digits>", "cnpj:<chars>", or "none:<id>" when there is no document.
    document_key: p.string(),
    outbox: p.json<DomainEvent[]>().lazy(),
    outbox_pending: p.boolean().nullable().lazy(),
  },
  indexes: [
    { properties: ['team_id', 'created_at'] },
    { properties: ['team_id', 'updated_at'] },
    { properties: ['team_id', 'name_sort'] },
    { properties: ['team_id', 'status', 'created_at'] },
  ],
  uniques: [{ properties: ['team_id', 'document_key'] }],
});

export interface ClientRecord {
  _id: string;
  team_id: string;
  type: 'PF' | 'PJ';
  name: string;
  email: string | null;
  phone: string | null;
  whatsapp: string | null;
  segment: string | null;
  status: 'active' | 'inactive';
  address: Address | null;
  notes: string | null;
  tags: string[];
  metadata: Record<string, unknown>;
  cpf: string | null;
  rg: string | null;
  birth_date: string | null;
  gender: string | null;
  marital_status: string | null;
  nationality: string | null;
  profession: string | null;
  legal_name: string | null;
  trade_name: string | null;
  cnpj: string | null;
  state_registration: string | null;
  contact_person: string | null;
  deactivated_at: Date | null;
  created_at: Date;
  updated_at: Date;
  version: number;
  search_text: string;
  document_digits: string | null;
  name_sort: string;
  document_key: string;
}
