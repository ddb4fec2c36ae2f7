import * as s from '@lpm/shared/http/schemas';
import { listQuerySchema } from '@lpm/shared/http/pagination';
import { MONEY_MAX } from '@lpm/shared/money';
import { describedFields, nameLink } from '@lpm/shared/http/common-schemas';
import { recordResponses, stampedStatus, writtenShapes } from '@lpm/shared/http/record-responses';
import { contactLink, describedShape, listItemShape, listedClient, ownerIds } from '@lpm/shared/http/read-shapes';

export const DEAL_STATUSES = ['ativo', 'ganho', 'perdido', 'arquivado'] as const;

export const DEAL_SORT_FIELDS = [
  'created_at',
  'updated_at',
  'title',
  'value',
  'probability',
  'expected_close_date',
] as const;

const id = s.text(100);
/** An amount of money: a number >= 0 (at most 2 decimals, checked when turned into cents). */
const money = (field: string): s.Schema<number> =>
  s.typed<number>({
    type: 'number',
    minimum: 0,
    maximum: MONEY_MAX,
    'x-message': `${field} must be a number from 0 to ${MONEY_MAX}`,
  });

const currency = s.typed<string>({
  type: 'string',
  pattern: '^[A-Za-z]{3}$',
  'x-message': 'currency must be a 3-letter code',
});

const dealFields = {
  title: s.name(),
  value: s.nullable(money('value')),
  currency,
  // Checked against the team's pipeline in the domain (400 Invalid phase).
  phase: s.text(100, { 'x-message': 'Invalid phase' }),
  probability: s.typed<number>({ type: 'number', minimum: 0, maximum: 100, 'x-message': 'Invalid probability' }),
  expected_close_date: s.nullable(s.date()),
  client_id: s.nullable(id),
  responsible_id: s.nullable(id),
  source: s.nullable(s.text(100)),
  ...describedFields,
};

export const createDealBody = s.named(
  'CreateDealRequest',
  'A new deal: only the title is required.',
  s.object(dealFields, ['title']),
);
export const updateDealBody = s.named('UpdateDealRequest', 'Any subset of the create fields.', s.object(dealFields));
export const phaseBody = s.named(
  'MoveDealPhaseRequest',
  'The phase to move to.',
  s.object({ phase: dealFields.phase, notes: s.nullable(s.longText()) }, ['phase']),
);
export const wonBody = s.named(
  'MarkDealWonRequest',
  'How the deal was won, and whether to open its case.',
  s.object({
    final_value: s.nullable(money('final_value')),
    notes: s.nullable(s.longText()),
    create_case: s.boolean(),
    case_data: s.object({ title: s.name(), area: s.nullable(s.text()) }),
  }),
);
export const lostBody = s.named(
  'MarkDealLostRequest',
  'Why the deal was lost.',
  s.object({ loss_reason: s.nullable(s.text()), competitor: s.nullable(s.text()), notes: s.nullable(s.longText()) }),
);

const queryMoney = (field: string) =>
  s.typed<number>({ type: 'number', minimum: 0, 'x-message': `${field} must be a number >= 0` });

export const listDealsQuery = listQuerySchema(DEAL_SORT_FIELDS, {
  status: s.enumOf(DEAL_STATUSES, 'Invalid status'),
  phase: s.text(100),
  client_id: id,
  responsible_id: id,
  source: s.text(100),
  min_value: queryMoney('min_value'),
  max_value: queryMoney('max_value'),
  from: s.date(),
  to: s.date(),
});

/** The summary sums one currency (default BRL), as the financial summary does. */
export const summaryQuery = s.typed<{ currency?: string }>({ type: 'object', properties: { currency } });

export type CreateDealBody = s.Static<typeof createDealBody>;
export type UpdateDealBody = s.Static<typeof updateDealBody>;
export type PhaseBody = s.Static<typeof phaseBody>;
export type WonBody = s.Static<typeof wonBody>;
export type LostBody = s.Static<typeof lostBody>;
export type DealListQuery = s.Static<typeof listDealsQuery>;
export type SummaryQuery = s.Static<typeof summaryQuery>;

const { string, nullableString, integer, number, nullableNumber, strings, freeObject } = s.out;

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

const described = { source: nullableString, ...describedShape };

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

const insights = s.named(
  'DealInsights',
  "Win probability, health and risk factors computed from the deal's phase, age and activity, with their basis.",
  s.shape({
    win_probability: number,
    health: string,
    risk_factors: strings,
    basis: freeObject,
  }),
  { partial: true },
);

const detailFields = {
  ...common,
  client: s.nullableShape({ id: string, name: nullableString, type: nullableString, email: nullableString }),
  responsible: contactLink,
  ...described,
  ...closing,
};

const dealDetail = s.named(
  'Deal',
  'A deal in its detail read shape.',
  s.shape({
    ...common,
    client: detailFields.client,
    responsible: detailFields.responsible,
    ...described,
    activities_count: integer,
    ai_insights: insights,
    ...closing,
  }),
);

const dealWritten = s.shape({ ...common, ...ownerIds, ...described, ...closing });
const { created: dealCreated, changes: dealChanges } = writtenShapes(
  'Deal',
  'deal',
  dealWritten,
  'id, the fields sent (normalized), previous_phase and phase_changed_at after a phase move, and updated_at.',
);

const dealListItem = listItemShape('Deal', 'A deal', {
  ...common,
  client: listedClient,
  responsible: nameLink,
  source: nullableString,
  created_at: string,
});

const countAndValue = s.named(
  'CountAndValue',
  'How many deals, and their value.',
  s.shape({ count: integer, value: number }),
);

const dealsSummary = s.named(
  'DealsSummary',
  'The pipeline summary (of one currency).',
  s.shape({
    currency: string,
    total_deals: integer,
    total_value: number,
    weighted_value: number,
    by_phase: s.mapOf(countAndValue),
    by_status: s.mapOf(countAndValue),
    conversion_rate: number,
    average_deal_size: number,
    average_sales_cycle_days: number,
  }),
);

/** The detail read shape as events carry it: without activities_count and ai_insights, which GET adds. */
export type DealEventData = s.ShapeOf<typeof detailFields>;
export type DealDetail = s.Static<typeof dealDetail>;
export type DealCreated = s.Static<typeof dealCreated>;
export type DealListItem = s.Static<typeof dealListItem>;
export type DealsSummary = s.Static<typeof dealsSummary>;

const dealPhaseMove = s.named(
  'DealPhaseMove',
  'A phase move.',
  s.shape({
    id: string,
    phase: string,
    previous_phase: nullableString,
    phase_changed_at: nullableString,
    updated_at: string,
  }),
);
const dealWon = s.named(
  'DealWon',
  'A won deal, with the case created for it.',
  s.shape({
    id: string,
    status: string,
    final_value: nullableNumber,
    won_at: string,
    case_created: s.shape({ id: string, title: string }),
  }),
  { partial: true },
);
const dealLost = s.named(
  'DealLost',
  'A lost deal.',
  s.shape({ id: string, status: string, loss_reason: nullableString, competitor: nullableString, lost_at: string }),
);
const dealArchived = stampedStatus('DealArchived', 'An archived deal.', 'archived_at');
export type DealPhaseMove = s.Static<typeof dealPhaseMove>;
export type DealWon = s.Static<typeof dealWon>;
export type DealLost = s.Static<typeof dealLost>;
export type DealArchived = s.Static<typeof dealArchived>;

export const responses = {
  ...recordResponses({ detail: dealDetail, created: dealCreated, changes: dealChanges, listItem: dealListItem }),
  phase: s.okResponse(200, dealPhaseMove),
  won: s.okResponse(200, dealWon),
  lost: s.okResponse(200, dealLost),
  archived: s.okResponse(200, dealArchived),
  summary: s.okResponse(200, dealsSummary),
};

/** The contract of the record routes (shared/src/service/record-routes.ts): the DELETE archives the deal. */
export const recordContract = {
  schemas: { list: listDealsQuery, create: createDealBody, update: updateDealBody },
  responses: { ...responses, removed: responses.archived },
};
