// Financial use cases (docs/decisions.md §5 "Financial records"): amounts in integer cents,
// links to clients and cases checked at write time, status moved through PUT
// (pending -> paid | cancelled; paid and cancelled are final), DELETE cancels,
// financial.overdue armed by every write, and the period summary.
import { FieldChanges, trimmedText, type SentFields } from '@lpm/shared/changes';
import { noFieldsToUpdate } from '@lpm/shared/errors';
import { newEvent, type DomainEvent } from '@lpm/shared/events';
import type { Identity } from '@lpm/shared/identity';
import { exact } from '@lpm/shared/http/schemas';
import { newId } from '@lpm/shared/ids';
import { rearmed } from '@lpm/shared/jobs/time-signals';
import { timeZoneSync } from '@lpm/shared/jobs/time-zone-sync';
import type { TeamSyncWork } from '@lpm/shared/jobs/team-syncs';
import { fromCents } from '@lpm/shared/money';
import { DAY_MS, dayIn, iso, nextDay, zonedMoment } from '@lpm/shared/time';
import type { CaseLinks } from '@lpm/shared/views/case-links';
import type { ClientLinks } from '@lpm/shared/views/client-links';
import { RecordLinks, type Links } from '@lpm/shared/views/record-links';
import type { FinancialRecord, FinancialStatus, FinancialType } from '../data/financial-entity.ts';
import type { FinancialRepository } from '../data/financial-repository.ts';
import {
  FINANCIAL_TYPES,
  type CreateFinancialBody,
  type FinancialRecordCancelled,
  type FinancialSummary,
  type GroupBy,
  type FinancialListQuery,
  type OverdueQuery,
  type SummaryQuery,
  type UpdateFinancialBody,
} from '../contract/financial-schemas.ts';
import {
  cannotCancelPaid,
  cannotModifyPaid,
  invalidAmount,
  invalidTransition,
  periodReversed,
  periodTooLong,
} from '../contract/financial-errors.ts';
import {
  PAID_LOCKED,
  WRITABLE_FIELDS,
  createdShape,
  derivedFields,
  detailShape,
  listItemShape,
  overdueItemShape,
  amountCents,
} from './financial-shape.ts';
import { bucketsBetween } from './summary-buckets.ts';

export interface FinancialDeps {
  records: FinancialRepository;
  clientLinks: ClientLinks;
  caseLinks: CaseLinks;
  /** The current instant (tests move it). */
  now?: () => Date;
}

export type Who = Pick<Identity, 'teamId' | 'userId' | 'settings'>;

/** At most this many buckets in one summary (about ten years of days). */
export const MAX_BUCKETS = 3700;
const TOP_CLIENTS = 5;

const fields = new FieldChanges<FinancialRecord>({
  empty: { metadata: {} },
  normalize: {
    category: trimmedText('category'),
    description: trimmedText('description'),
    currency: (c) => c.toUpperCase(),
  },
});

/** Whole calendar days from `from` to `to` (YYYY-MM-DD). */
const daysBetween = (from: string, to: string) =>
  Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS);

/** When financial.overdue is due: the first moment of the day after the due date (team zone), pending records only. */
export function overdueAt(r: Pick<FinancialRecord, 'status' | 'due_date'>, timeZone: string): Date | null {
  return r.status === 'pending' && r.due_date ? zonedMoment(nextDay(r.due_date), timeZone, '00:00:00') : null;
}

/** A body in the record's terms: amount as amount_cents (400 Invalid amount for more than 2 decimals). */
function stored(body: { amount?: number }): SentFields<FinancialRecord> {
  const { amount, ...rest } = body as Record<string, unknown>;
  if (amount === undefined) return rest;
  const cents = amountCents(amount as number);
  if (cents === null) throw invalidAmount();
  return { ...rest, amount_cents: cents };
}

/** Field names as the API shows them (amount_cents is amount, in units). */
function asApi(values: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(values)) {
    if (k === 'amount_cents') out.amount = typeof v === 'number' ? fromCents(v) : v;
    else out[k] = v;
  }
  return out;
}

export class Financial {
  private readonly deps: FinancialDeps;
  private readonly recordLinks: RecordLinks;

  constructor(deps: FinancialDeps) {
    this.deps = deps;
    this.recordLinks = new RecordLinks({ clients: deps.clientLinks, cases: deps.caseLinks });
  }

  private now(): Date {
    return this.deps.now?.() ?? new Date();
  }

  /** The clients and cases of `records`; those in `known` (what a check found) are not read back. */
  private links(
    teamId: string,
    records: Pick<FinancialRecord, 'client_id' | 'case_id'>[],
    known?: Links,
  ): Promise<Links> {
    return this.recordLinks.of(teamId, records, known);
  }

  /** The detail read shape, as events carry it. */
  async detailOf(record: FinancialRecord, known?: Links) {
    return detailShape(record, await this.links(record.team_id, [record], known));
  }

  async create(who: Who, body: CreateFinancialBody) {
    const sent = stored(body);
    const checked = await this.recordLinks.check(who, body);
    const now = this.now();
    const tz = who.settings.timezone;
    const status = body.status ?? 'pending';
    const base = {
      _id: newId('fin'),
      team_id: who.teamId,
      ...fields.initial(WRITABLE_FIELDS, sent),
      status,
      cancelled_at: null,
      created_at: now,
      updated_at: now,
      version: 1,
    };
    if (!base.currency) base.currency = 'BRL';
    if (status === 'paid' && !base.paid_date) base.paid_date = dayIn(tz, now);
    const record: FinancialRecord = { ...base, ...derivedFields(base), overdue_at: overdueAt(base, tz) };
    const event = newEvent('financial.created', who.teamId, await this.detailOf(record, checked), null, who.userId);
    await this.deps.records.insert(record, [event]);
    return createdShape(record);
  }

  /** The team sync of financial records (shared/src/jobs/team-syncs.ts): each pending record's overdue moment computed again in the team's time zone (rearmed). */
  syncWork(): Record<'time-zone', TeamSyncWork<FinancialRecord>> {
    return {
      'time-zone': timeZoneSync(
        this.deps.records,
        { status: 'pending' },
        (r, timezone, now) => rearmed({ overdue_at: r.overdue_at }, { overdue_at: overdueAt(r, timezone) }, now),
        () => this.now(),
      ),
    };
  }

  async get(who: Who, id: string) {
    return this.detailOf(await this.deps.records.get(who.teamId, id));
  }

  async list(who: Who, q: FinancialListQuery) {
    const { type, status, category, case_id, client_id, from, to } = q;
    const { records, total } = await this.deps.records.list(
      who.teamId,
      { type, status, category, case_id, client_id, from, to },
      q,
    );
    const links = await this.links(who.teamId, records);
    return { items: records.map((r) => listItemShape(r, links)), total };
  }

  async overdue(who: Who, q: OverdueQuery) {
    const today = dayIn(who.settings.timezone, this.now());
    const { records, total } = await this.deps.records.overdue(who.teamId, today, q);
    const links = await this.links(who.teamId, records);
    return { items: records.map((r) => overdueItemShape(r, links, daysBetween(r.due_date!, today))), total };
  }

  async update(who: Who, id: string, body: UpdateFinancialBody) {
    if (Object.keys(body).length === 0) throw noFieldsToUpdate();
    const { status: wanted, ...rest } = body;
    const sentFields = stored(rest);
    const checked = await this.recordLinks.check(who, body);
    const tz = who.settings.timezone;
    return this.deps.records.update(who.teamId, id, async (current) => {
      const now = this.now();
      const { next, sent } = fields.apply(current, sentFields, WRITABLE_FIELDS);
      if (!next.currency) next.currency = current.currency;
      if (wanted !== undefined && wanted !== current.status) {
        if (current.status !== 'pending') throw invalidTransition(current.status, wanted);
        next.status = wanted;
      }
      if (current.status === 'paid') {
        const locked = fields.diff(PAID_LOCKED, current, next).changed;
        if (locked.length) throw cannotModifyPaid(locked.map((f) => (f === 'amount_cents' ? 'amount' : f)));
      }
      const paying = next.status === 'paid' && current.status !== 'paid';
      if (paying && !next.paid_date) next.paid_date = dayIn(tz, now);
      if (next.status === 'cancelled' && current.status !== 'cancelled') next.cancelled_at = now;

      const { changed, previous } = fields.diff([...WRITABLE_FIELDS, 'status', 'cancelled_at'], current, next);
      const answer = (at: Date) => ({
        id,
        ...asApi(sent),
        ...(wanted !== undefined ? { status: next.status } : {}),
        ...(changed.includes('paid_date') ? { paid_date: next.paid_date } : {}),
        ...(changed.includes('cancelled_at') ? { cancelled_at: iso(next.cancelled_at) } : {}),
        updated_at: iso(at),
      });
      if (changed.length === 0) return { result: answer(current.updated_at) };

      next.updated_at = now;
      Object.assign(next, derivedFields(next));
      next.overdue_at =
        changed.includes('status') || changed.includes('due_date') ? overdueAt(next, tz) : current.overdue_at;
      const events: DomainEvent[] = [];
      if (paying)
        events.push(
          newEvent('financial.paid', who.teamId, await this.detailOf(next, checked), asApi(previous), who.userId),
        );

      const set: Partial<FinancialRecord> = { updated_at: now, ...derivedFields(next), overdue_at: next.overdue_at };
      for (const f of changed) Object.assign(set, { [f]: next[f] });
      return { result: answer(now), write: { set, events } };
    });
  }

  /** DELETE: pending -> cancelled; idempotent on a cancelled record; 422 on a paid one. */
  async cancel(who: Who, id: string) {
    return this.deps.records.update(who.teamId, id, async (current) => {
      const cancelled = exact<FinancialRecordCancelled>();
      if (current.status === 'cancelled')
        return { result: cancelled({ id, status: 'cancelled', cancelled_at: iso(current.cancelled_at) }) };
      if (current.status === 'paid') throw cannotCancelPaid();
      const now = this.now();
      const next = { ...current, status: 'cancelled' as FinancialStatus };
      const set: Partial<FinancialRecord> = {
        status: 'cancelled',
        cancelled_at: now,
        updated_at: now,
        overdue_at: null,
        ...derivedFields(next),
      };
      return { result: cancelled({ id, status: 'cancelled', cancelled_at: iso(now) }), write: { set, events: [] } };
    });
  }

  async summary(who: Who, q: SummaryQuery): Promise<FinancialSummary> {
    const tz = who.settings.timezone;
    const today = dayIn(tz, this.now());
    const monthStart = `${today.slice(0, 7)}-01`;
    const monthEnd = (() => {
      const d = new Date(Date.parse(`${monthStart}T00:00:00Z`));
      d.setUTCMonth(d.getUTCMonth() + 1, 0);
      return d.toISOString().slice(0, 10);
    })();
    const from = q.from ?? (q.to && q.to < monthStart ? `${q.to.slice(0, 7)}-01` : monthStart);
    const to = q.to ?? (q.from && q.from > monthEnd ? q.from : monthEnd);
    if (from > to) throw periodReversed();
    const groupBy: GroupBy = q.group_by ?? 'month';
    const buckets = bucketsBetween(groupBy, from, to, MAX_BUCKETS);
    if (!buckets) throw periodTooLong(MAX_BUCKETS);
    const currency = (q.currency ?? 'BRL').toUpperCase();

    const cents = await this.deps.records.summary(who.teamId, currency, from, to, groupBy);
    const get = (key: string) => cents.get(key) ?? 0;
    const figures = (prefix: string) => {
      const [revenue, expense, cost] = FINANCIAL_TYPES.map((t) => get(`${prefix}${t}`));
      return {
        revenue: fromCents(revenue),
        expense: fromCents(expense),
        cost: fromCents(cost),
        profit: fromCents(revenue - expense - cost),
      };
    };
    const pending = figures('P:');
    // Keys are category names, user text: no prototype, so `__proto__` is a category like any other.
    const byCategory = Object.create(null) as Record<string, number>;
    const revenueByClient: [string, number][] = [];
    for (const [key, value] of cents) {
      if (key.startsWith('C:')) byCategory[key.slice(2)] = fromCents(value);
      else if (key.startsWith('R:')) revenueByClient.push([key.slice(2), value]);
    }
    revenueByClient.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    const top = revenueByClient.slice(0, TOP_CLIENTS);
    const names = await this.deps.clientLinks.find(
      who.teamId,
      top.map(([c]) => c),
    );
    const bucketKey = groupBy === 'month' ? 'month' : groupBy === 'day' ? 'day' : 'week';
    const bucketRows = buckets.map((b) => {
      const f = FINANCIAL_TYPES.map((t) => get(`B:${t}:${b}`)) as [number, number, number];
      return {
        [bucketKey]: b,
        revenue: fromCents(f[0]),
        expense: fromCents(f[1]),
        cost: fromCents(f[2]),
        profit: fromCents(f[0] - f[1] - f[2]),
      };
    });
    return {
      period: { from, to },
      currency,
      group_by: groupBy,
      totals: figures('T:'),
      pending: { revenue: pending.revenue, expense: pending.expense, cost: pending.cost },
      by_category: byCategory,
      [`by_${bucketKey}`]: bucketRows,
      top_clients: top.map(([clientId, value]) => ({
        client_id: clientId,
        name: names.get(clientId)?.name ?? null,
        total_revenue: fromCents(value),
      })),
    };
  }
}

export type { FinancialType };
