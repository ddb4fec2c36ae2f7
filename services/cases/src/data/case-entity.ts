import { defineEntity, p } from '@mikro-orm/mongodb';
import type { DomainEvent } from '@lpm/shared/events';

export const CASE_PRIORITIES = ['alta', 'media', 'baixa'] as const;
export const CASE_STATUSES = ['ativo', 'arquivado'] as const;
export type CasePriority = (typeof CASE_PRIORITIES)[number];
export type CaseStatus = (typeof CASE_STATUSES)[number];

export interface TimelineEntry {
  id: string;
  type: 'case_created' | 'phase_change' | 'status_change' | 'case_updated' | 'activity_added' | 'activity_completed' | 'document_added';
  description: string;
  user_id: string | null;
  created_at: Date;
}

export const CaseEntity = defineEntity({
  name: 'Case',
  collection: 'cases',
  properties: {
    _id: p.string().primary(),
    team_id: p.string(),
    title: p.string(),
    number: p.string().nullable(),
    area: p.string().nullable(),
    subject: p.string().nullable(),
    phase: p.string(),
    priority: p.string(),
    status: p.string(),
    client_id: p.string().nullable(),
    responsible_id: p.string().nullable(),
    sla_date: p.string().nullable(),
    description: p.string().nullable(),
    labels: p.json<string[]>(),
    metadata: p.json<Record<string, unknown>>(),
    activities_count: p.integer(),
    documents_count: p.integer(),
    archived_at: p.datetime().nullable(),
    created_at: p.datetime(),
    updated_at: p.datetime(),
    version: p.integer(),
    // Derived, for search, sorting and uniqueness without collation (FerretDB has none).
    search_text: p.string(),
    title_sort: p.string(),
    priority_rank: p.integer(),
    sla_missing: p.integer(),
    // Unique per team: "n:<number>", or "none:<id>" when the case has no number.
    number_key: p.string(),
    // Time-driven signals (shared/src/time-signals.ts): due instants, null when disarmed.
    sla_warning_at: p.datetime().nullable(),
    sla_overdue_at: p.datetime().nullable(),
    timeline: p.json<TimelineEntry[]>().lazy(),
    outbox: p.json<DomainEvent[]>().lazy(),
    outbox_pending: p.boolean().nullable().lazy(),
  },
  // Each list sort ends with _id (ties), so its index does too: MongoDB then reads
  // a page off the index instead of sorting every matching case.
  indexes: [
    { properties: ['team_id', 'created_at', '_id'] },
    { properties: ['team_id', 'updated_at', '_id'] },
    { properties: ['team_id', 'title_sort', '_id'] },
    { properties: ['team_id', 'priority_rank', '_id'] },
    { properties: ['team_id', 'sla_missing', 'sla_date', '_id'] },
    { properties: ['team_id', 'status', 'created_at', '_id'] },
    { properties: ['team_id', 'priority', 'created_at', '_id'] },
    { properties: ['team_id', 'phase'] },
    { properties: ['team_id', 'client_id', 'status'] },
    { properties: ['team_id', 'responsible_id', 'created_at', '_id'] },
  ],
  uniques: [{ properties: ['team_id', 'number_key'] }],
});

export interface CaseRecord {
  _id: string;
  team_id: string;
  title: string;
  number: string | null;
  area: string | null;
  subject: string | null;
  phase: string;
  priority: CasePriority;
  status: CaseStatus;
  client_id: string | null;
  responsible_id: string | null;
  sla_date: string | null;
  description: string | null;
  labels: string[];
  metadata: Record<string, unknown>;
  activities_count: number;
  documents_count: number;
  archived_at: Date | null;
  created_at: Date;
  updated_at: Date;
  version: number;
  search_text: string;
  title_sort: string;
  priority_rank: number;
  sla_missing: number;
  number_key: string;
  sla_warning_at: Date | null;
  sla_overdue_at: Date | null;
  timeline?: TimelineEntry[];
}

/** Local copy of the clients shown on cases, fed by client events: for display only. */
export const ClientViewEntity = defineEntity({
  name: 'ClientView',
  collection: 'client_views',
  properties: {
    _id: p.string().primary(),
    team_id: p.string(),
    name: p.string(),
    type: p.string(),
    email: p.string().nullable(),
    phone: p.string().nullable(),
    status: p.string(),
    // The client's updated_at this copy reflects; older news never overwrites newer.
    as_of: p.datetime(),
  },
});

export interface ClientView {
  _id: string;
  team_id: string;
  name: string;
  type: string;
  email: string | null;
  phone: string | null;
  status: string;
  as_of: Date;
}
