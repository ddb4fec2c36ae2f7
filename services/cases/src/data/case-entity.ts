import { p } from '@mikro-orm/mongodb';
import { nullableStrings, signalProperties } from '@lpm/shared/store/entity-properties';
import { storedEntity } from '@lpm/shared/store/entities';
import type { RecordOf } from '@lpm/shared/store/orm';
import { PRIORITIES } from '@lpm/shared/priority';
import { CASE_STATUSES } from '../contract/case-schemas.ts';

export type CaseStatus = (typeof CASE_STATUSES)[number];

export interface TimelineEntry {
  id: string;
  type:
    | 'case_created'
    | 'phase_change'
    | 'status_change'
    | 'case_updated'
    | 'activity_added'
    | 'activity_completed'
    | 'document_added'
    | 'publication_received';
  description: string;
  user_id: string | null;
  created_at: Date;
}

/** Entries packed into one JSON string (domain/case-timeline.ts), or as documents in a case stored before that. */
export type StoredTimeline = string | TimelineEntry[];

export const CaseEntity = storedEntity('Case', 'cases', {
  properties: {
    title: p.string(),
    number: p.string().strictNullable(),
    area: p.string().strictNullable(),
    subject: p.string().strictNullable(),
    phase: p.string(),
    priority: p.enum(PRIORITIES),
    status: p.enum(CASE_STATUSES),
    ...nullableStrings('client_id', 'responsible_id'),
    sla_date: p.string().strictNullable(),
    description: p.string().strictNullable(),
    labels: p.json<string[]>(),
    metadata: p.json<Record<string, unknown>>(),
    activities_count: p.integer(),
    documents_count: p.integer(),
    archived_at: p.datetime().strictNullable(),
    // Derived, for search, sorting and uniqueness without collation (FerretDB has none).
    search_text: p.string(),
    title_sort: p.string(),
    priority_rank: p.integer(),
    sla_missing: p.integer(),
    // Unique per team: "n:<number>", or "none:<id>" when the case has no number.
    number_key: p.string(),
    /** The deal whose won with create_case made the case (asked by the deals service only), else null. */
    origin_deal_id: p.string().strictNullable(),
    // Unique: "deal:<deal id>", so a deal has one case however often and late its won is retried; "none:<id>" otherwise.
    origin_key: p.string(),
    ...signalProperties('sla_warning_at', 'sla_overdue_at'),
    // Left out of reads that do not ask for it (RecordStore's heavy fields).
    timeline: p.json<StoredTimeline>().nullable().lazy(),
    // The ids of the last activity events applied to activities_count, written with the count: each event counts once.
    counted_events: p.json<string[]>().nullable().lazy(),
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
  // origin_key's is sparse: cases stored before it have none until their next write.
  uniques: [{ properties: ['team_id', 'number_key'] }, { properties: ['origin_key'], options: { sparse: true } }],
});

export type CaseRecord = RecordOf<typeof CaseEntity>;

/** The unique origin_key of a won deal's case: a deal has one case however often its won is retried. */
export const dealOriginKey = (dealId: string) => `deal:${dealId}`;
