import * as s from '@lpm/shared/http/schemas';
import { listQuerySchema } from '@lpm/shared/http/pagination';
import { MONEY_MAX } from '@lpm/shared/money';
import { caseLink, nameLink } from '@lpm/shared/http/common-schemas';
import { recordResponses, stampedStatus, writtenShapes } from '@lpm/shared/http/record-responses';
import { contactLink, listItemShape } from '@lpm/shared/http/read-shapes';

export const FINANCIAL_TYPES = ['revenue', 'expense', 'cost'] as const;
export const FINANCIAL_STATUSES = ['pending', 'paid', 'cancelled'] as const;
export const PAYMENT_METHODS = ['pix', 'boleto', 'cartao', 'transferencia', 'dinheiro', 'cheque'] as const;

export const FINANCIAL_SORT_FIELDS = ['date', 'due_date', 'amount', 'created_at'] as const;

const id = s.text(100);
const type = s.enumOf(FINANCIAL_TYPES, 'Invalid type');
const status = s.enumOf(FINANCIAL_STATUSES, 'Invalid status');
/** A real calendar day (ajv-formats' full date check): anything else is 400 Invalid date format. */
const day = () => s.date({ 'x-message': 'Invalid date format' });
/** Greater than zero and at most MONEY_MAX here; at most 2 decimals is checked in the domain (same message). */
const amount = s.typed<number>({
  type: 'number',
  exclusiveMinimum: 0,
  maximum: MONEY_MAX,
  'x-message': 'Invalid amount',
});
const currency = s.text(3, { pattern: '^[A-Za-z]{3}$', 'x-message': 'Invalid currency' });

const financialFields = {
  type,
  category: s.name(),
  description: s.longText(),
  amount,
  currency,
  date: day(),
  due_date: s.nullable(day()),
  paid_date: s.nullable(day()),
  case_id: s.nullable(id),
  client_id: s.nullable(id),
  payment_method: s.nullable(s.enumOf(PAYMENT_METHODS, 'Invalid payment method')),
  invoice_number: s.nullable(s.text()),
  notes: s.nullable(s.longText()),
  metadata: s.nullable(s.metadata()),
};

export const createFinancialBody = s.named(
  'CreateFinancialRecordRequest',
  'A new revenue, expense or cost, pending or paid.',
  s.object({ ...financialFields, status: s.enumOf(['pending', 'paid'] as const, 'Invalid status') }, [
    'type',
    'category',
    'description',
    'amount',
    'date',
  ]),
);
export const updateFinancialBody = s.named(
  'UpdateFinancialRecordRequest',
  'Any subset of the record fields, and a status move.',
  s.object({ ...financialFields, status }),
);

export const listFinancialQuery = listQuerySchema(FINANCIAL_SORT_FIELDS, {
  type,
  status,
  category: s.text(500),
  case_id: id,
  client_id: id,
  from: day(),
  to: day(),
});

export const overdueQuery = listQuerySchema(FINANCIAL_SORT_FIELDS);

export const GROUPINGS = ['day', 'week', 'month'] as const;
/** The buckets of a summary (group_by). */
export type GroupBy = (typeof GROUPINGS)[number];

export const summaryQuery = s.typed<{ from?: string; to?: string; group_by: GroupBy; currency?: string }>({
  type: 'object',
  properties: {
    from: day(),
    to: day(),
    group_by: { ...s.enumOf(GROUPINGS, 'Invalid group_by'), default: 'month' },
    currency,
  },
});

export type CreateFinancialBody = s.Static<typeof createFinancialBody>;
export type UpdateFinancialBody = s.Static<typeof updateFinancialBody>;
export type FinancialListQuery = s.Static<typeof listFinancialQuery>;
export type OverdueQuery = s.Static<typeof overdueQuery>;
export type SummaryQuery = s.Static<typeof summaryQuery>;

const { string, nullableString, integer, number, freeObject } = s.out;

/** The fields a list shows first, as every read shape does. */
const listed = {
  id: string,
  type: string,
  category: string,
  description: string,
  amount: number,
  currency: string,
  date: string,
  due_date: nullableString,
};
const common = {
  ...listed,
  paid_date: nullableString,
  status: string,
};
const tail = {
  payment_method: nullableString,
  invoice_number: nullableString,
  notes: nullableString,
  metadata: freeObject,
  cancelled_at: nullableString,
  created_at: string,
  updated_at: string,
};

const written = s.shape({ ...common, case_id: nullableString, client_id: nullableString, ...tail });
const { created, changes } = writtenShapes(
  'FinancialRecord',
  'record',
  written,
  'id, the fields sent (and those a status move sets) and updated_at.',
);
const detail = s.named(
  'FinancialRecord',
  'A financial record in its detail read shape.',
  s.shape({
    ...common,
    case: caseLink,
    client: contactLink,
    ...tail,
  }),
);
const listItem = listItemShape('FinancialRecord', 'A record', {
  ...listed,
  status: string,
  case: caseLink,
  client: nameLink,
  created_at: string,
});
const overdueItem = s.named(
  'OverdueFinancialRecord',
  'An overdue record.',
  s.shape({
    id: string,
    type: string,
    category: string,
    description: string,
    amount: number,
    due_date: string,
    days_overdue: integer,
    client: nameLink,
  }),
);
const figures = s.shape({ revenue: number, expense: number, cost: number, profit: number });
const bucketList = <K extends string>(key: K) =>
  s.arrayOf(
    s.shape({
      ...({ [key]: string } as Record<K, typeof string>),
      revenue: number,
      expense: number,
      cost: number,
      profit: number,
    }),
  );
// Partial: of by_month, by_day and by_week only the group_by one is there.
const summary = s.named(
  'FinancialSummary',
  'The figures of a period, with the buckets of group_by: by_month, by_day or by_week.',
  s.shape({
    period: s.shape({ from: string, to: string }),
    currency: string,
    group_by: string,
    totals: figures,
    pending: s.shape({ revenue: number, expense: number, cost: number }),
    by_category: s.mapOf(number),
    by_month: bucketList('month'),
    by_day: bucketList('day'),
    by_week: bucketList('week'),
    top_clients: s.arrayOf(s.shape({ client_id: string, name: nullableString, total_revenue: number })),
  }),
  { partial: true },
);

export type FinancialRecordCreated = s.Static<typeof created>;
export type FinancialRecordDetail = s.Static<typeof detail>;
export type FinancialRecordListItem = s.Static<typeof listItem>;
export type OverdueFinancialRecord = s.Static<typeof overdueItem>;
export type FinancialSummary = s.Static<typeof summary>;

const cancelled = stampedStatus('FinancialRecordCancelled', 'A cancelled record.', 'cancelled_at');
export type FinancialRecordCancelled = s.Static<typeof cancelled>;

export const responses = {
  ...recordResponses({ detail, created, changes, listItem }),
  cancelled: s.okResponse(200, cancelled),
  overdue: s.pageResponse(overdueItem),
  summary: s.okResponse(200, summary),
};

/** The contract of the record routes (shared/src/service/record-routes.ts): the DELETE cancels the record. */
export const recordContract = {
  schemas: { list: listFinancialQuery, create: createFinancialBody, update: updateFinancialBody },
  responses: { ...responses, removed: responses.cancelled },
};
