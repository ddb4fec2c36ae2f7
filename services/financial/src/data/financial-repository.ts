// Financial records in the store: the record store for writes (outbox, lock,
// version), the list and overdue queries, and the summary in one aggregation. The
// list by date, filtered by nothing but type, status, category and a period of
// dates, is read by day buckets of the record's date (store/list-buckets.ts): a
// write that changes the date moves the record to its new day.
import type { Db, Filter } from 'mongodb';
import { findPage, sortOrder, type ListQuery, type RecordPage } from '@lpm/shared/http/pagination';
import type { Logger } from '@lpm/shared/logger';
import { dayOf } from '@lpm/shared/store/list-buckets';
import { ListedRecordStore } from '@lpm/shared/store/listed-record-store';
import { rangeOf } from '@lpm/shared/store/list-queries';
import type { Relay } from '@lpm/shared/store/record-store-types';
import { recordNotFound } from '../contract/financial-errors.ts';
import type { GroupBy } from '../contract/financial-schemas.ts';
import type { FinancialRecord, FinancialStatus, FinancialType } from './financial-entity.ts';

export interface FinancialFilter {
  type?: FinancialType;
  status?: FinancialStatus;
  category?: string;
  case_id?: string;
  client_id?: string;
  /** Record `date` from..to, inclusive (YYYY-MM-DD compares as text). */
  from?: string;
  to?: string;
}

const SORT_KEYS: Record<string, (keyof FinancialRecord & string)[]> = {
  date: ['date'],
  // Records without a due date come last in either direction.
  due_date: ['due_missing', 'due_date'],
  amount: ['amount_cents'],
  created_at: ['created_at'],
};

export class FinancialRepository extends ListedRecordStore<FinancialRecord> {
  constructor(db: Db, relay: Relay, logger?: Logger) {
    super({
      db,
      relay,
      collection: 'financial_records',
      idKind: 'fin',
      noun: 'record',
      notFound: recordNotFound,
      signalFields: ['overdue_at'],
      lists: {
        order: { field: 'date', keys: SORT_KEYS.date },
        dayField: 'date',
        counted: ['type', 'status', 'category'],
        logger,
      },
    });
  }

  async list(teamId: string, f: FinancialFilter, q: ListQuery): Promise<RecordPage<FinancialRecord>> {
    const { from, to, ...equal } = f;
    // The bucket is the date itself, so a period is whole days (from and to are YYYY-MM-DD, as the dates are).
    const days = from || to ? { from: from ? dayOf(from)! : undefined, to: to ? dayOf(to)! : undefined } : undefined;
    const bucketed = await this.bucketPage(teamId, equal, q, '-date', days);
    if (bucketed) return bucketed;
    const filter: Filter<FinancialRecord> = { team_id: teamId };
    for (const k of ['type', 'status', 'category', 'case_id', 'client_id'] as const)
      if (f[k]) Object.assign(filter, { [k]: f[k] });
    if (f.from || f.to) filter.date = rangeOf({ $gte: f.from, $lte: f.to });
    return this.page(filter, q, '-date');
  }

  /** Pending records whose due date is before `today` (YYYY-MM-DD in the team's zone). */
  overdue(teamId: string, today: string, q: ListQuery): Promise<RecordPage<FinancialRecord>> {
    return this.page({ team_id: teamId, status: 'pending', due_date: { $lt: today } }, q, 'due_date');
  }

  private page(filter: Filter<FinancialRecord>, q: ListQuery, fallback: string): Promise<RecordPage<FinancialRecord>> {
    return findPage(this.collection, filter, q, {
      projection: this.projection(),
      sort: sortOrder(q.sort, fallback, SORT_KEYS),
    });
  }

  /**
   * Cents per summary key (domain/financial-shape.ts summaryKeys) over the team's
   * records in one currency dated from..to: one round trip, $match, $unwind of the
   * precomputed keys (each carrying its cents), $group with $sum over integer cents (exact).
   */
  async summary(
    teamId: string,
    currency: string,
    from: string,
    to: string,
    groupBy: GroupBy,
  ): Promise<Map<string, number>> {
    const keys = `sum_${groupBy}`;
    const rows = await this.collection
      .aggregate<{ _id: string; cents: number }>([
        { $match: { team_id: teamId, currency, date: { $gte: from, $lte: to } } },
        { $unwind: `$${keys}` },
        { $group: { _id: `$${keys}.k`, cents: { $sum: `$${keys}.c` } } },
      ])
      .toArray();
    return new Map(rows.map((r) => [r._id, r.cents]));
  }
}
