import {
  arrayOf,
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
  text,
  typed,
  type Static,
} from '@lpm/shared/http/schemas';
import { listQuerySchema } from '@lpm/shared/http/pagination';
import { MONEY_MAX } from '@lpm/shared/money';
import { caseLink, nameLink } from '@lpm/shared/http/common-schemas';

export const FINANCIAL_TYPES = ['revenue', 'expense', 'cost'] as const;
export const FINANCIAL_STATUSES = ['pending', 'paid', 'cancelled'] as const;
export const PAYMENT_METHODS = ['pix', 'boleto', 'cartao', 'transferencia', 'dinheiro', 'cheque'] as const;

export const FINANCIAL_SORT_FIELDS = ['date', 'due_date', 'amount', 'created_at'] as const;

const id = text(100);
const type = enumOf(FINANCIAL_TYPES, 'Invalid type');
const status = enumOf(FINANCIAL_STATUSES, 'Invalid status');
/** A real calendar day (ajv-formats' full date check): anything else is 400 Invalid date format. */
const day = () => date({ 'x-message': 'Invalid date format' });
/** Greater than zero and at most MONEY_MAX here; at most 2 decimals is checked in the domain (same message). */
const amount = typed<number>({
  type: 'number',
  exclusiveMinimum: 0,
  maximum: MONEY_MAX,
  'x-message': 'Invalid amount',
});
const currency = text(3, { pattern: '^[A-Za-z]{3}$', 'x-message': 'Invalid currency' });

const financialFields = {
  type,
  category: name(),
  description: longText(),
  amount,
  currency,
  date: day(),
  due_date: nullable(day()),
  paid_date: nullable(day()),
  case_id: nullable(id),
  client_id: nullable(id),
  payment_method: nullable(enumOf(PAYMENT_METHODS, 'Invalid payment method')),
  invoice_number: nullable(text()),
  notes: nullable(longText()),
  metadata: nullable(metadata()),
};

export const createFinancialBody = named(
  'CreateFinancialRecordRequest',
  'A new revenue, expense or cost, pending or paid.',
  object({ ...financialFields, status: enumOf(['pending', 'paid'] as const, 'Invalid status') }, [
    'type',
    'category',
    'description',
    'amount',
    'date',
  ]),
);
export const updateFinancialBody = named(
  'UpdateFinancialRecordRequest',
  'Any subset of the record fields, and a status move.',
  object({ ...financialFields, status }),
);

export const listFinancialQuery = listQuerySchema(FINANCIAL_SORT_FIELDS, {
  type,
  status,
  category: text(500),
  case_id: id,
  client_id: id,
  from: day(),
  to: day(),
});

export const overdueQuery = listQuerySchema(FINANCIAL_SORT_FIELDS);

export const GROUPINGS = ['day', 'week', 'month'] as const;
/** The buckets of a summary (group_by). */
export type GroupBy = (typeof GROUPINGS)[number];

export const summaryQuery = typed<{ from?: string; to?: string; group_by: GroupBy; currency?: string }>({
  type: 'object',
  properties: {
    from: day(),
    to: day(),
    group_by: { ...enumOf(GROUPINGS, 'Invalid group_by'), default: 'month' },
    currency,
  },
});

export type CreateFinancialBody = Static<typeof createFinancialBody>;
export type UpdateFinancialBody = Static<typeof updateFinancialBody>;
export type FinancialListQuery = Static<typeof listFinancialQuery>;
export type OverdueQuery = Static<typeof overdueQuery>;
export type SummaryQuery = Static<typeof summaryQuery>;

const { string, nullableString, integer, number, freeObject } = out;

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

const written = shape({ ...common, case_id: nullableString, client_id: nullableString, ...tail });
const created = named('FinancialRecordCreated', 'A created record: links as flat ids.', written);
const changes = named(
  'FinancialRecordChanges',
  'id, the fields sent (and those a status move sets) and updated_at.',
  written,
  { partial: true },
);
const detail = named(
  'FinancialRecord',
  'A financial record in its detail read shape.',
  shape({
    ...common,
    case: caseLink,
    client: nullableShape({ id: string, name: nullableString, email: nullableString }),
    ...tail,
  }),
);
const listItem = named(
  'FinancialRecordListItem',
  'A record in a list.',
  shape({
    ...listed,
    status: string,
    case: caseLink,
    client: nameLink,
    created_at: string,
  }),
);
const overdueItem = named(
  'OverdueFinancialRecord',
  'An overdue record.',
  shape({
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
const figures = shape({ revenue: number, expense: number, cost: number, profit: number });
const bucketList = <K extends string>(key: K) =>
  arrayOf(
    shape({
      ...({ [key]: string } as Record<K, typeof string>),
      revenue: number,
      expense: number,
      cost: number,
      profit: number,
    }),
  );
// Partial: of by_month, by_day and by_week only the group_by one is there.
const summary = named(
  'FinancialSummary',
  'The figures of a period, with the buckets of group_by: by_month, by_day or by_week.',
  shape({
    period: shape({ from: string, to: string }),
    currency: string,
    group_by: string,
    totals: figures,
    pending: shape({ revenue: number, expense: number, cost: number }),
    by_category: mapOf(number),
    by_month: bucketList('month'),
    by_day: bucketList('day'),
    by_week: bucketList('week'),
    top_clients: arrayOf(shape({ client_id: string, name: nullableString, total_revenue: number })),
  }),
  { partial: true },
);

export type FinancialRecordCreated = Static<typeof created>;
export type FinancialRecordDetail = Static<typeof detail>;
export type FinancialRecordListItem = Static<typeof listItem>;
export type OverdueFinancialRecord = Static<typeof overdueItem>;
export type FinancialSummary = Static<typeof summary>;

const cancelled = named(
  'FinancialRecordCancelled',
  'A cancelled record.',
  shape({ id: string, status: string, cancelled_at: nullableString }),
);
export type FinancialRecordCancelled = Static<typeof cancelled>;

export const responses = {
  detail: okResponse(200, detail),
  created: okResponse(201, created),
  /** id, the fields sent (and those a status move sets), updated_at. */
  updated: okResponse(200, changes),
  cancelled: okResponse(200, cancelled),
  list: pageResponse(listItem),
  overdue: pageResponse(overdueItem),
  summary: okResponse(200, summary),
};
