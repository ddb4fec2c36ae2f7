// The documentation of the financial records operations beside their contract: the errors come from
// the contract's constructors and the request schemas (shared/src/http/operation-docs.ts).
import { caseNotFound, clientNotFound, noFieldsToUpdate } from '@lpm/shared/errors';
import type { OperationDocs, ServiceDocs } from '@lpm/shared/http/operation-docs';
import { ID_RULE, LIST_RULE, PUT_RULE, schemaMessage } from '@lpm/shared/http/operation-docs';
import {
  cannotCancelPaid,
  cannotModifyPaid,
  invalidAmount,
  invalidTransition,
  periodReversed,
  recordNotFound,
} from './financial-errors.ts';

export const FINANCIAL_OPERATIONS: OperationDocs = {
  'GET /v1/financial': {
    operationId: 'listFinancialRecords',
    summary: 'List financial records',
    description: `The team's records, by \`-date\` by default; \`from\`/\`to\` compare \`date\`. ${LIST_RULE}`,
    errors: [schemaMessage('type'), schemaMessage('status'), schemaMessage('from'), schemaMessage('sort')],
  },
  'POST /v1/financial': {
    operationId: 'createFinancialRecord',
    summary: 'Create a financial record',
    description:
      'Creates a revenue, expense or cost, `pending` by default (or `paid`). `amount` is greater than zero with at most 2 decimals; dates are real calendar days. Emits `financial.created` (and, once its due date passes unpaid, `financial.overdue`).',
    examples: {
      fees: {
        summary: 'Fees due from a client',
        value: {
          type: 'revenue',
          category: 'honorarios',
          description: 'Honorários - parcela 1/3',
          amount: 5000,
          date: '2026-11-20',
          due_date: '2026-12-05',
          client_id: 'cli_01jd3k8q5x0v7m2n4p6r8t0w2y',
          payment_method: 'pix',
        },
      },
    },
    errors: [
      schemaMessage('type'),
      invalidAmount(),
      schemaMessage('date'),
      schemaMessage('status'),
      caseNotFound(),
      clientNotFound(),
    ],
  },
  'GET /v1/financial/summary': {
    operationId: 'getFinancialSummary',
    summary: 'Financial summary of a period',
    description:
      'Over records dated `from`..`to` (default: the current month) in one `currency` (default BRL): `totals` sum paid records, `pending` sums pending ones, cancelled records count nowhere; `profit = revenue - expense - cost`. Buckets by `group_by`: `by_month` (YYYY-MM), `by_day` or `by_week` (ISO weeks, YYYY-Www), empty buckets included; `by_category` sums paid amounts; `top_clients`: up to 5 by paid revenue.',
    errors: [schemaMessage('from'), schemaMessage('group_by'), schemaMessage('currency'), periodReversed()],
  },
  'GET /v1/financial/overdue': {
    operationId: 'listOverdueFinancialRecords',
    summary: 'List overdue financial records',
    description: `Pending records whose due date is before today in the team's time zone, with \`days_overdue\`. ${LIST_RULE}`,
    errors: [schemaMessage('sort')],
  },
  'GET /v1/financial/{id}': {
    operationId: 'getFinancialRecord',
    summary: 'Read a financial record',
    description: `The record in its detail shape, case and client nested. ${ID_RULE}`,
    errors: [recordNotFound()],
  },
  'PUT /v1/financial/{id}': {
    operationId: 'updateFinancialRecord',
    summary: 'Update a financial record',
    description: `${PUT_RULE} pending -> paid (\`paid_date\` defaults to today; emits \`financial.paid\`) or cancelled; paid and cancelled are final. The amount, type and date of a paid record cannot change; its notes, description, invoice_number and metadata can.`,
    examples: {
      paid: {
        summary: 'Paid by PIX',
        value: { status: 'paid', paid_date: '2026-12-03', payment_method: 'pix', invoice_number: 'NF-2026-0142' },
      },
    },
    errors: [
      schemaMessage('type'),
      invalidAmount(),
      schemaMessage('date'),
      schemaMessage('status'),
      noFieldsToUpdate(),
      recordNotFound(),
      caseNotFound(),
      clientNotFound(),
      invalidTransition('paid', 'pending'),
      cannotModifyPaid(['amount']),
    ],
  },
  'DELETE /v1/financial/{id}': {
    operationId: 'cancelFinancialRecord',
    summary: 'Cancel a financial record',
    description:
      'pending -> cancelled (`cancelled_at` set); cancelling a cancelled record answers 200. A paid record cannot be cancelled: create a reversal record instead.',
    errors: [recordNotFound(), cannotCancelPaid()],
  },
};

export const FINANCIAL_DOCS: ServiceDocs = {
  tags: [
    {
      name: 'Financial',
      prefix: '/v1/financial',
      description: 'Revenue, expenses and procedural costs, their payment and the period summary.',
      idExample: 'fin_01jd3kb3c5d7e9f1g3h5j7k9m1',
    },
  ],
  operations: FINANCIAL_OPERATIONS,
};
