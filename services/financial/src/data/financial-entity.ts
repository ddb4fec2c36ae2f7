import { p } from '@mikro-orm/mongodb';
import { nullableStrings, signalProperties } from '@lpm/shared/store/entity-properties';
import { storedEntity } from '@lpm/shared/store/entities';
import type { RecordOf } from '@lpm/shared/store/orm';
import { FINANCIAL_STATUSES, FINANCIAL_TYPES, PAYMENT_METHODS } from '../contract/financial-schemas.ts';

export type FinancialType = (typeof FINANCIAL_TYPES)[number];
export type FinancialStatus = (typeof FINANCIAL_STATUSES)[number];

/** One summary key of a record: what it adds to (k) and how many cents (c). */
export interface SummaryKey {
  k: string;
  c: number;
}

export const FinancialEntity = storedEntity('FinancialRecord', 'financial_records', {
  properties: {
    type: p.enum(FINANCIAL_TYPES),
    category: p.string(),
    description: p.string(),
    // Money exact to the cent: integer cents, as summed floats drift by fractions of a cent.
    amount_cents: p.integer(),
    currency: p.string(),
    date: p.string(),
    due_date: p.string().strictNullable(),
    paid_date: p.string().strictNullable(),
    status: p.enum(FINANCIAL_STATUSES),
    ...nullableStrings('case_id', 'client_id'),
    payment_method: p.enum(PAYMENT_METHODS).strictNullable(),
    invoice_number: p.string().strictNullable(),
    notes: p.string().strictNullable(),
    metadata: p.json<Record<string, unknown>>(),
    cancelled_at: p.datetime().strictNullable(),
    // Derived on every write: records without a due date sort last either way.
    due_missing: p.integer(),
    // Summary keys (FerretDB groups only by precomputed values: no $dateToString,
    // no $cond): one list per group_by, each entry naming what the record adds to
    // and its cents (FerretDB's $unwind keeps only the unwound field, so the amount
    // travels inside it). See domain/financial-shape.ts summaryKeys().
    sum_month: p.json<SummaryKey[]>(),
    sum_day: p.json<SummaryKey[]>(),
    sum_week: p.json<SummaryKey[]>(),
    // Due instant of financial.overdue.
    ...signalProperties('overdue_at'),
  },
  indexes: [
    { properties: ['team_id', 'date', '_id'] },
    { properties: ['team_id', 'due_missing', 'due_date', '_id'] },
    { properties: ['team_id', 'amount_cents', '_id'] },
    { properties: ['team_id', 'created_at', '_id'] },
    { properties: ['team_id', 'status', 'due_date', '_id'] },
    { properties: ['team_id', 'currency', 'date'] },
  ],
});

export type FinancialRecord = RecordOf<typeof FinancialEntity>;
