import {
  boolean,
  date,
  enumOf,
  longText,
  mapOf,
  metadata,
  name,
  named,
  nullable,
  nullableShape,
  object,
  okResponse,
  out,
  pageResponse,
  shape,
  stringList,
  text,
  typed,
  type Schema,
  type ShapeOf,
  type Static,
} from '@lpm/shared/http/schemas';
import { listQuerySchema } from '@lpm/shared/http/pagination';
import { MONEY_MAX } from '@lpm/shared/money';
import { nameLink } from '@lpm/shared/http/common-schemas';

export const DEAL_STATUSES = ['ativo', 'ganho', 'perdido', 'arquivado'] as const;

export const DEAL_SORT_FIELDS = [
  'created_at',
  'updated_at',
  'title',
  'value',
  'probability',
  'expected_close_date',
] as const;

const id = text(100);
/** An amount of money: a number >= 0 (at most 2 decimals, checked when turned into cents). */
const money = (field: string): Schema<number> =>
  typed<number>({
    type: 'number',
    minimum: 0,
    maximum: MONEY_MAX,
    'x-message': `${field} must be a number from 0 to ${MONEY_MAX}`,
  });

const currency = typed<string>({
  type: 'string',
  pattern: '^[A-Za-z]{3}$',
  'x-message': 'currency must be a 3-letter code',
});

const dealFields = {
  title: name(),
  value: nullable(money('value')),
  currency,
  // Checked against the team's pipeline in the domain (400 Invalid phase).
  phase: text(100, { 'x-message': 'Invalid phase' }),
  probability: typed<number>({ type: 'number', minimum: 0, maximum: 100, 'x-message': 'Invalid probability' }),
  expected_close_date: nullable(date()),
  client_id: nullable(id),
  responsible_id: nullable(id),
  source: nullable(text(100)),
  description: nullable(longText()),
  labels: nullable(stringList()),
  metadata: nullable(metadata()),
};

export const createDealBody = named(
  'CreateDealRequest',
  'A new deal: only the title is required.',
  object(dealFields, ['title']),
);
export const updateDealBody = named('UpdateDealRequest', 'Any subset of the create fields.', object(dealFields));
export const phaseBody = named(
  'MoveDealPhaseRequest',
  'The phase to move to.',
  object({ phase: dealFields.phase, notes: nullable(longText()) }, ['phase']),
);
export const wonBody = named(
  'MarkDealWonRequest',
  'How the deal was won, and whether to open its case.',
  object({
    final_value: nullable(money('final_value')),
    notes: nullable(longText()),
    create_case: boolean(),
    case_data: object({ title: name(), area: nullable(text()) }),
  }),
);
export const lostBody = named(
  'MarkDealLostRequest',
  'Why the deal was lost.',
  object({ loss_reason: nullable(text()), competitor: nullable(text()), notes: nullable(longText()) }),
);

const queryMoney = (field: string) =>
  typed<number>({ type: 'number', minimum: 0, 'x-message': `${field} must be a number >= 0` });

export const listDealsQuery = listQuerySchema(DEAL_SORT_FIELDS, {
  status: enumOf(DEAL_STATUSES, 'Invalid status'),
  phase: text(100),
  client_id: id,
  responsible_id: id,
  source: text(100),
  min_value: queryMoney('min_value'),
  max_value: queryMoney('max_value'),
  from: date(),
  to: date(),
});

/** The summary sums one currency (default BRL), as the financial summary does. */
export const summaryQuery = typed<{ currency?: string }>({ type: 'object', properties: { currency } });

export type CreateDealBody = Static<typeof createDealBody>;
export type UpdateDealBody = Static<typeof updateDealBody>;
export type PhaseBody = Static<typeof phaseBody>;
export type WonBody = Static<typeof wonBody>;
export type LostBody = Static<typeof lostBody>;
export type DealListQuery = Static<typeof listDealsQuery>;
export type SummaryQuery = Static<typeof summaryQuery>;

const { string, nullableString, integer, number, nullableNumber, strings, freeObject } = out;

const common = {
  id: string,
  title: string,
  value: nullableNumber,
  currency: string,
  phase: string,
  probability: number,
  status: string,
  expected_close_date: nullableString,
};

const described = { source: nullableString, description: nullableString, labels: strings, metadata: freeObject };

const closing = {
  final_value: nullableNumber,
  won_at: nullableString,
  loss_reason: nullableString,
  competitor: nullableString,
  lost_at: nullableString,
  archived_at: nullableString,
  previous_phase: nullableString,
  phase_changed_at: nullableString,
  created_at: string,
  updated_at: string,
};

const insights = named(
  'DealInsights',
  "Win probability, health and risk factors computed from the deal's phase, age and activity, with their basis.",
  shape({
    win_probability: number,
    health: string,
    risk_factors: strings,
    basis: freeObject,
  }),
  { partial: true },
);

const detailFields = {
  ...common,
  client: nullableShape({ id: string, name: nullableString, type: nullableString, email: nullableString }),
  responsible: nullableShape({ id: string, name: nullableString, email: nullableString }),
  ...described,
  ...closing,
};

const dealDetail = named(
  'Deal',
  'A deal in its detail read shape.',
  shape({
    ...common,
    client: detailFields.client,
    responsible: detailFields.responsible,
    ...described,
    activities_count: integer,
    ai_insights: insights,
    ...closing,
  }),
);

const dealWritten = shape({
  ...common,
  client_id: nullableString,
  responsible_id: nullableString,
  ...described,
  ...closing,
});
const dealCreated = named('DealCreated', 'A created deal: links as flat ids.', dealWritten);
const dealChanges = named(
  'DealChanges',
  'id, the fields sent (normalized), previous_phase and phase_changed_at after a phase move, and updated_at.',
  dealWritten,
  { partial: true },
);

const dealListItem = named(
  'DealListItem',
  'A deal in a list.',
  shape({
    ...common,
    client: nullableShape({ id: string, name: nullableString, type: nullableString }),
    responsible: nameLink,
    source: nullableString,
    created_at: string,
  }),
);

const countAndValue = named(
  'CountAndValue',
  'How many deals, and their value.',
  shape({ count: integer, value: number }),
);

const dealsSummary = named(
  'DealsSummary',
  'The pipeline summary (of one currency).',
  shape({
    currency: string,
    total_deals: integer,
    total_value: number,
    weighted_value: number,
    by_phase: mapOf(countAndValue),
    by_status: mapOf(countAndValue),
    conversion_rate: number,
    average_deal_size: number,
    average_sales_cycle_days: number,
  }),
);

/** The detail read shape as events carry it: without activities_count and ai_insights, which GET adds. */
export type DealEventData = ShapeOf<typeof detailFields>;
export type DealDetail = Static<typeof dealDetail>;
export type DealCreated = Static<typeof dealCreated>;
export type DealListItem = Static<typeof dealListItem>;
export type DealsSummary = Static<typeof dealsSummary>;

const dealPhaseMove = named(
  'DealPhaseMove',
  'A phase move.',
  shape({
    id: string,
    phase: string,
    previous_phase: nullableString,
    phase_changed_at: nullableString,
    updated_at: string,
  }),
);
const dealWon = named(
  'DealWon',
  'A won deal, with the case created for it.',
  shape({
    id: string,
    status: string,
    final_value: nullableNumber,
    won_at: string,
    case_created: shape({ id: string, title: string }),
  }),
  { partial: true },
);
const dealLost = named(
  'DealLost',
  'A lost deal.',
  shape({ id: string, status: string, loss_reason: nullableString, competitor: nullableString, lost_at: string }),
);
const dealArchived = named(
  'DealArchived',
  'An archived deal.',
  shape({ id: string, status: string, archived_at: nullableString }),
);
export type DealPhaseMove = Static<typeof dealPhaseMove>;
export type DealWon = Static<typeof dealWon>;
export type DealLost = Static<typeof dealLost>;
export type DealArchived = Static<typeof dealArchived>;

export const responses = {
  detail: okResponse(200, dealDetail),
  created: okResponse(201, dealCreated),
  /** id, the fields sent, previous_phase and phase_changed_at after a move, updated_at. */
  updated: okResponse(200, dealChanges),
  phase: okResponse(200, dealPhaseMove),
  won: okResponse(200, dealWon),
  lost: okResponse(200, dealLost),
  archived: okResponse(200, dealArchived),
  list: pageResponse(dealListItem),
  summary: okResponse(200, dealsSummary),
};
