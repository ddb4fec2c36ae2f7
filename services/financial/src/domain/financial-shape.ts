// Read shapes of a financial record built from its stored record and the linked
// client and case views; the fields derived for sorting and for the summary.
import { exact } from '@lpm/shared/http/schemas';
import { centsOf, fromCents } from '@lpm/shared/money';
import { iso } from '@lpm/shared/time';
import type { ClientView } from '@lpm/shared/views/client-view-entity';
import type { CaseView } from '@lpm/shared/views/case-view-entity';
import { linkOf } from '@lpm/shared/views/record-links';
import type { FinancialRecord, SummaryKey } from '../data/financial-entity.ts';
import type {
  FinancialRecordCreated,
  FinancialRecordDetail,
  FinancialRecordListItem,
  GroupBy,
  OverdueFinancialRecord,
} from '../contract/financial-schemas.ts';
import { bucketOf } from './summary-buckets.ts';

/** Fields a caller may send on create or update (amount is stored as amount_cents). */
export const WRITABLE_FIELDS = [
  'type',
  'category',
  'description',
  'amount_cents',
  'currency',
  'date',
  'due_date',
  'paid_date',
  'case_id',
  'client_id',
  'payment_method',
  'invoice_number',
  'notes',
  'metadata',
] as const;

/** What a paid record may still change: text about it, never where its money counts (amount, type, dates, currency, category, links, method). */
const PAID_EDITABLE: readonly string[] = ['notes', 'description', 'invoice_number', 'metadata'];

/** Fields locked once a record is paid: moving any would move closed revenue between summary buckets and top_clients. */
export const PAID_LOCKED = WRITABLE_FIELDS.filter((f) => !PAID_EDITABLE.includes(f));

export interface Links {
  clients: Map<string, ClientView>;
  cases: Map<string, CaseView>;
}

export const MAX_AMOUNT_CENTS = 100_000_000_000_000; // 1,000,000,000,000.00

/** A record's amount in integer cents; null when it is not a positive number with at most 2 decimals. */
export function amountCents(amount: number): number | null {
  const cents = typeof amount === 'number' ? centsOf(amount) : null;
  return cents !== null && cents > 0 && cents <= MAX_AMOUNT_CENTS ? cents : null;
}

/** The summary keys a record adds its amount to, for one group_by (see FinancialRepository.summary). */
export function summaryKeys(r: SummaryFields, groupBy: GroupBy): SummaryKey[] {
  let keys: string[] = [];
  if (r.status === 'pending') keys = [`P:${r.type}`];
  else if (r.status === 'paid') {
    keys = [`T:${r.type}`, `C:${r.category}`, `B:${r.type}:${bucketOf(groupBy, r.date)}`];
    if (r.type === 'revenue' && r.client_id) keys.push(`R:${r.client_id}`);
  }
  return keys.map((k) => ({ k, c: r.amount_cents }));
}

type SummaryFields = Pick<FinancialRecord, 'status' | 'type' | 'category' | 'client_id' | 'date' | 'amount_cents'>;

export function derivedFields(r: SummaryFields & Pick<FinancialRecord, 'due_date'>) {
  return {
    due_missing: r.due_date ? 0 : 1,
    sum_month: summaryKeys(r, 'month'),
    sum_day: summaryKeys(r, 'day'),
    sum_week: summaryKeys(r, 'week'),
  };
}

const kase = (r: FinancialRecord, links: Links) => linkOf(r.case_id, links.cases, ['title', 'number']);
const client = (r: FinancialRecord, links: Links) => linkOf(r.client_id, links.clients, ['name']);

/** The fields a list shows first, as every read shape does. */
const listed = (r: FinancialRecord) => ({
  id: r._id,
  type: r.type,
  category: r.category,
  description: r.description,
  amount: fromCents(r.amount_cents),
  currency: r.currency,
  date: r.date,
  due_date: r.due_date,
});

const money = (r: FinancialRecord) => ({ ...listed(r), paid_date: r.paid_date, status: r.status });

const rest = (r: FinancialRecord) => ({
  payment_method: r.payment_method,
  invoice_number: r.invoice_number,
  notes: r.notes,
  metadata: r.metadata ?? {},
  cancelled_at: iso(r.cancelled_at),
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

/** The create response: links as flat ids. */
export const createdShape = (r: FinancialRecord): FinancialRecordCreated =>
  exact<FinancialRecordCreated>()({ ...money(r), case_id: r.case_id, client_id: r.client_id, ...rest(r) });

/** GET by id and the events' data.object. */
export const detailShape = (r: FinancialRecord, links: Links): FinancialRecordDetail =>
  exact<FinancialRecordDetail>()({
    ...money(r),
    case: kase(r, links),
    client: linkOf(r.client_id, links.clients, ['name', 'email']),
    ...rest(r),
  });

export const listItemShape = (r: FinancialRecord, links: Links): FinancialRecordListItem =>
  exact<FinancialRecordListItem>()({
    ...listed(r),
    status: r.status,
    case: kase(r, links),
    client: client(r, links),
    created_at: iso(r.created_at),
  });

export const overdueItemShape = (r: FinancialRecord, links: Links, daysOverdue: number): OverdueFinancialRecord =>
  exact<OverdueFinancialRecord>()({
    id: r._id,
    type: r.type,
    category: r.category,
    description: r.description,
    amount: fromCents(r.amount_cents),
    due_date: r.due_date!, // an overdue record has a due date (the overdue query's filter)
    days_overdue: daysOverdue,
    client: client(r, links),
  });
