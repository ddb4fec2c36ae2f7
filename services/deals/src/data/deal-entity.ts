import { p } from '@mikro-orm/mongodb';
import { nullableStrings } from '@lpm/shared/store/entity-properties';
import { storedEntity } from '@lpm/shared/store/entities';
import type { RecordOf } from '@lpm/shared/store/orm';
import { DEAL_STATUSES } from '../contract/deal-schemas.ts';

export type DealStatus = (typeof DEAL_STATUSES)[number];

/** One addend of the summary: `k` is a JSON array naming the figure (deal-shape.ts summaryParts). */
export interface SummaryPart {
  k: string;
  v: number;
}

/** Time a deal spent in one phase of the pipeline, summed over its stints there. */
export interface PhaseStint {
  phase: string;
  ms: number;
}

/** A segment of the team's history (source and value band), as DealsRepository.closedBySegment keys it. */
export const segmentKey = (source: string | null, band: string | null) => JSON.stringify([source, band]);

export const DealEntity = storedEntity('Deal', 'deals', {
  properties: {
    title: p.string(),
    // Money exact to the cent: integer cents, as summed floats drift by fractions of a cent.
    value_cents: p.integer().strictNullable(),
    currency: p.string(),
    phase: p.string(),
    probability: p.float(),
    status: p.enum(DEAL_STATUSES),
    expected_close_date: p.string().strictNullable(),
    ...nullableStrings('client_id', 'responsible_id'),
    source: p.string().strictNullable(),
    description: p.string().strictNullable(),
    labels: p.json<string[]>(),
    metadata: p.json<Record<string, unknown>>(),
    final_value_cents: p.integer().strictNullable(),
    won_at: p.datetime().strictNullable(),
    ...nullableStrings('loss_reason', 'competitor'),
    lost_at: p.datetime().strictNullable(),
    ...nullableStrings('close_notes', 'phase_notes'),
    archived_at: p.datetime().strictNullable(),
    previous_phase: p.string().strictNullable(),
    phase_changed_at: p.datetime().strictNullable(),
    // When the deal entered its current phase (creation or the last move), and the time spent in earlier phases.
    phase_entered_at: p.datetime(),
    phase_stints: p.json<PhaseStint[]>(),
    case_created: p.json<{ id: string; title: string }>().strictNullable(),
    /**
     * 1 while the case a won with create_case may have made, or may still be making,
     * waits to be archived because the deal was closed otherwise (lost, or archived
     * while open), else 0: written with the close, cleared once the cases service
     * archived it or found none for long enough; the case archive repair's equality
     * marker. case_archive_by: who closed the deal.
     */
    case_archive_pending: p.integer().nullable(),
    case_archive_by: p.string().nullable(),
    // Derived on every write (deal-shape.ts derivedFields): FerretDB has no collation
    // and its aggregation only groups and sums (and computes only the first
    // accumulator of a $group), so what is sorted, grouped or summed is stored.
    title_sort: p.string(),
    value_missing: p.integer(),
    close_date_missing: p.integer(),
    /** This deal's addends to the summary, one per figure (SummaryPart): unwound and summed by key. */
    summary_parts: p.json<SummaryPart[]>(),
    /** won / lost once closed (kept through archiving), else null: the team's history for ai_insights. */
    outcome: p.string().strictNullable(),
    /** JSON [source, value band, outcome] of a closed deal, else null: the history's $group key. */
    history_key: p.string().strictNullable(),
  },
  // Each list sort ends with _id (ties), so its index does too.
  indexes: [
    { properties: ['team_id', 'created_at', '_id'] },
    { properties: ['team_id', 'updated_at', '_id'] },
    { properties: ['team_id', 'title_sort', '_id'] },
    { properties: ['team_id', 'value_missing', 'value_cents', '_id'] },
    { properties: ['team_id', 'probability', '_id'] },
    { properties: ['team_id', 'close_date_missing', 'expected_close_date', '_id'] },
    { properties: ['team_id', 'status', 'created_at', '_id'] },
    { properties: ['team_id', 'phase'] },
    { properties: ['team_id', 'client_id', 'created_at', '_id'] },
    { properties: ['team_id', 'responsible_id', 'created_at', '_id'] },
    { properties: ['team_id', 'outcome'] },
    { properties: ['case_archive_pending'] },
  ],
});

export type DealRecord = RecordOf<typeof DealEntity>;
