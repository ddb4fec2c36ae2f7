// Read shapes of a deal built from its stored record and the linked client and
// user, money between the API's numbers and the store's integer cents, and the
// fields derived on every write for sorting and for the summary's one aggregation.
import { foldText } from '@lpm/shared/text';
import { exact } from '@lpm/shared/http/schemas';
import { centsOf, fromCents } from '@lpm/shared/money';
import { iso } from '@lpm/shared/time';
import { linkOf, type Links } from '@lpm/shared/views/record-links';
import type { DealRecord, PhaseStint, SummaryPart } from '../data/deal-entity.ts';
import { tooManyDecimals } from '../contract/deal-errors.ts';
import type { DealCreated, DealEventData, DealListItem } from '../contract/deal-schemas.ts';

/** Fields a client may send on create and update, as the record names them (value is value_cents). */
export const WRITABLE_FIELDS = [
  'title',
  'value_cents',
  'currency',
  'phase',
  'probability',
  'expected_close_date',
  'client_id',
  'responsible_id',
  'source',
  'description',
  'labels',
  'metadata',
] as const;

/** An amount sent by a client as integer cents; more than 2 decimals is 400. */
export function toCents(field: string, amount: number): number {
  const cents = centsOf(amount);
  if (cents === null) throw tooManyDecimals(field);
  return cents;
}

/** Record field names as the API shows them (value_cents is value, final_value_cents final_value). */
export function apiNames(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) out[k.replace(/_cents$/, '')] = v;
  return out;
}

/** The value bands of the team's history (ai_insights), by value in cents. */
export const VALUE_BANDS = [
  { name: 'ate-10k', below: 1_000_000 },
  { name: '10k-50k', below: 5_000_000 },
  { name: '50k-200k', below: 20_000_000 },
  { name: '200k+', below: Infinity },
] as const;

export function valueBand(valueCents: number | null): string {
  if (valueCents === null) return 'sem-valor';
  return VALUE_BANDS.find((b) => valueCents < b.below)!.name;
}

type Derivable = Pick<
  DealRecord,
  | 'title'
  | 'value_cents'
  | 'expected_close_date'
  | 'status'
  | 'phase'
  | 'probability'
  | 'final_value_cents'
  | 'won_at'
  | 'lost_at'
  | 'created_at'
  | 'source'
>;

/** The names of the summary's figures, as the keys of SummaryPart. */
export const part = {
  count: (status: string, phase: string) => JSON.stringify(['count', status, phase]),
  value: (status: string, phase: string) => JSON.stringify(['value', status, phase]),
  weighted: JSON.stringify(['weighted']),
  wonFinal: JSON.stringify(['won_final']),
  wonValued: JSON.stringify(['won_valued']),
  cycleMs: JSON.stringify(['cycle_ms']),
};

/** A deal's addends to the summary (docs/decisions.md §5 "Deals summary"); zero addends are left out. */
export function summaryParts(r: Derivable): SummaryPart[] {
  const parts: SummaryPart[] = [{ k: part.count(r.status, r.phase), v: 1 }];
  const add = (k: string, v: number) => v !== 0 && parts.push({ k, v });
  add(part.value(r.status, r.phase), r.value_cents ?? 0);
  if (r.status === 'ativo' && r.value_cents !== null)
    add(part.weighted, Math.round((r.value_cents * r.probability) / 100));
  if (r.status === 'ganho') {
    add(part.wonFinal, r.final_value_cents ?? 0);
    add(part.wonValued, r.final_value_cents === null ? 0 : 1);
    add(part.cycleMs, r.won_at ? r.won_at.getTime() - r.created_at.getTime() : 0);
  }
  return parts;
}

/** Fields kept in step with the record on every write: sort keys, summary addends, history keys. */
export function derivedFields(r: Derivable) {
  const outcome = r.won_at ? 'won' : r.lost_at ? 'lost' : null;
  return {
    title_sort: foldText(r.title),
    value_missing: r.value_cents === null ? 1 : 0,
    close_date_missing: r.expected_close_date === null ? 1 : 0,
    summary_parts: summaryParts(r),
    outcome,
    history_key: outcome ? JSON.stringify([r.source, valueBand(r.value_cents), outcome]) : null,
  };
}

/** The stints with `ms` more spent in `phase`. */
function addStint(stints: PhaseStint[], phase: string, ms: number): PhaseStint[] {
  const found = stints.some((s) => s.phase === phase);
  if (!found) return [...stints, { phase, ms }];
  return stints.map((s) => (s.phase === phase ? { phase, ms: s.ms + ms } : s));
}

/** The deal's stints as it leaves its phase at `now`: the time since it entered that phase added to it. */
export function stintsLeaving(current: DealRecord, now: Date): PhaseStint[] {
  return addStint(current.phase_stints ?? [], current.phase, now.getTime() - current.phase_entered_at.getTime());
}

const identifying = (r: DealRecord) => ({
  id: r._id,
  title: r.title,
  value: fromCents(r.value_cents),
  currency: r.currency,
  phase: r.phase,
  probability: r.probability,
  status: r.status,
  expected_close_date: r.expected_close_date,
});

const described = (r: DealRecord) => ({
  source: r.source,
  description: r.description,
  labels: r.labels ?? [],
  metadata: r.metadata ?? {},
});

const closing = (r: DealRecord) => ({
  final_value: fromCents(r.final_value_cents),
  won_at: iso(r.won_at),
  loss_reason: r.loss_reason,
  competitor: r.competitor,
  lost_at: iso(r.lost_at),
  archived_at: iso(r.archived_at),
  previous_phase: r.previous_phase,
  phase_changed_at: iso(r.phase_changed_at),
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

export function listItemShape(r: DealRecord, links: Links): DealListItem {
  return exact<DealListItem>()({
    ...identifying(r),
    client: linkOf(r.client_id, links.clients, ['name', 'type']),
    responsible: linkOf(r.responsible_id, links.users, ['name']),
    source: r.source,
    created_at: iso(r.created_at),
  });
}

/** The detail shape without activities_count and ai_insights (events carry this; GET adds both). */
export function detailShape(r: DealRecord, links: Links): DealEventData {
  return exact<DealEventData>()({
    ...identifying(r),
    client: linkOf(r.client_id, links.clients, ['name', 'type', 'email']),
    responsible: linkOf(r.responsible_id, links.users, ['name', 'email']),
    ...described(r),
    ...closing(r),
  });
}

/** The create response: linked records as flat ids (docs/decisions.md §10). */
export function createdShape(r: DealRecord): DealCreated {
  return exact<DealCreated>()({
    ...identifying(r),
    client_id: r.client_id,
    responsible_id: r.responsible_id,
    ...described(r),
    ...closing(r),
  });
}
