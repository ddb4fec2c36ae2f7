// The documentation of the deals operations beside their contract: the errors come from
// the contract's constructors and the request schemas (shared/src/http/operation-docs.ts).
import { clientNotFound, noFieldsToUpdate, userNotFound } from '@lpm/shared/errors';
import type { OperationDocs, ServiceDocs } from '@lpm/shared/http/operation-docs';
import { ID_RULE, LIST_RULE, PUT_RULE, schemaMessage } from '@lpm/shared/http/operation-docs';
import { dealArchived, dealClosed, dealNotFound, invalidPhase } from './deal-errors.ts';

const dealExample = {
  title: 'Contrato de assessoria tributária - Metalúrgica Souza',
  value: 48000,
  currency: 'BRL',
  phase: 'proposta',
  probability: 50,
  expected_close_date: '2026-12-15',
  client_id: 'cli_01jd3k8q5x0v7m2n4p6r8t0w2y',
  source: 'indicacao',
  labels: ['tributário'],
};

export const DEAL_OPERATIONS: OperationDocs = {
  'GET /v1/deals': {
    operationId: 'listDeals',
    summary: 'List deals',
    description: `The team's deals, newest first by default (\`-created_at\`). Filters combine; \`from\`/\`to\` compare the creation day in the team's time zone, inclusive. ${LIST_RULE}`,
    errors: [schemaMessage('status'), schemaMessage('sort')],
  },
  'POST /v1/deals': {
    operationId: 'createDeal',
    summary: 'Create a deal',
    description:
      "Creates a deal with status `ativo`. `phase` defaults to the first phase of the team's pipeline and `probability` to that phase's suggested probability; `currency` defaults to BRL. `client_id` and `responsible_id` must exist in the team. Emits `deal.created`.",
    examples: { proposta: { summary: 'A deal in proposta for a client', value: dealExample } },
    errors: [invalidPhase(), schemaMessage('probability'), clientNotFound(), userNotFound()],
  },
  'GET /v1/deals/summary': {
    operationId: 'getDealsSummary',
    summary: 'Pipeline summary',
    description:
      "Figures over the team's deals that are not archived: `weighted_value` sums value x probability / 100 over ativo deals; `by_phase` covers every phase of the pipeline (ativo deals); `by_status` has ativo, ganho (summing final_value) and perdido; `conversion_rate` = ganho / (ganho + perdido) x 100 (2 decimals, 0 when none); `average_deal_size` is the mean final_value and `average_sales_cycle_days` the mean days from creation to won (1 decimal) of won deals.",
  },
  'GET /v1/deals/{id}': {
    operationId: 'getDeal',
    summary: 'Read a deal',
    description: `The deal in its detail shape: client and responsible as nested objects with e-mail, \`activities_count\` and \`ai_insights\` (win probability, health and risk factors computed from the deal's phase, age and activity). ${ID_RULE}`,
    errors: [dealNotFound()],
  },
  'PUT /v1/deals/{id}': {
    operationId: 'updateDeal',
    summary: 'Update a deal',
    description: `${PUT_RULE} \`status\` cannot change here (use won, lost or DELETE). Sending \`phase\` is a phase move (allowed only while ativo), which also returns \`previous_phase\` and \`phase_changed_at\` and emits \`deal.phase_changed\`. Emits \`deal.updated\`.`,
    examples: { value: { summary: 'A new value and probability', value: { value: 52000, probability: 60 } } },
    errors: [
      invalidPhase(),
      schemaMessage('probability'),
      noFieldsToUpdate(),
      dealNotFound(),
      clientNotFound(),
      userNotFound(),
      dealClosed(),
      dealArchived(),
    ],
  },
  'PUT /v1/deals/{id}/phase': {
    operationId: 'moveDealPhase',
    summary: 'Move a deal to another phase',
    description:
      'Changes `phase` without changing `status`, only while the deal is ativo, and returns `previous_phase` and `phase_changed_at`. Emits `deal.phase_changed` and `deal.updated`.',
    examples: {
      negociacao: {
        summary: 'Into negotiation',
        value: { phase: 'negociacao', notes: 'Cliente pediu revisão dos honorários' },
      },
    },
    errors: [invalidPhase(), dealNotFound(), dealClosed(), dealArchived()],
  },
  'PUT /v1/deals/{id}/won': {
    operationId: 'markDealWon',
    summary: 'Mark a deal won',
    description:
      "ativo -> ganho. Stores `final_value` (default: the deal's value) and `won_at`. With `create_case: true` a case is created first (title: `case_data.title` or the deal's title; area from `case_data.area`; client and responsible from the deal) and returned as `case_created`; a retried request creates no second case. Of concurrent won/lost requests exactly one succeeds. Emits `deal.won`.",
    examples: {
      withCase: {
        summary: 'Won, opening the case',
        value: {
          final_value: 45000,
          notes: 'Assinado em reunião',
          create_case: true,
          case_data: { title: 'Assessoria tributária - Metalúrgica Souza', area: 'Tributário' },
        },
      },
    },
    errors: [dealNotFound(), dealClosed(), dealArchived()],
  },
  'PUT /v1/deals/{id}/lost': {
    operationId: 'markDealLost',
    summary: 'Mark a deal lost',
    description:
      'ativo -> perdido. Stores `loss_reason`, `competitor` and `lost_at`. Of concurrent won/lost requests exactly one succeeds. Emits `deal.lost`.',
    examples: {
      price: {
        summary: 'Lost on price',
        value: { loss_reason: 'Preço', competitor: 'Escritório Lima & Associados', notes: 'Proposta 20% abaixo' },
      },
    },
    errors: [dealNotFound(), dealClosed(), dealArchived()],
  },
  'DELETE /v1/deals/{id}': {
    operationId: 'archiveDeal',
    summary: 'Archive a deal',
    description:
      'Archives the deal from ativo, ganho or perdido (status arquivado, `archived_at` set). Archiving an archived deal answers 200 with the existing `archived_at`.',
    errors: [dealNotFound()],
  },
};

export const DEAL_DOCS: ServiceDocs = {
  tags: [
    {
      name: 'Deals',
      prefix: '/v1/deals',
      description: 'Commercial opportunities in the sales pipeline: ativo, then ganho, perdido or arquivado.',
      idExample: 'deal_01jd3k7w2m4q6s8u0x2z4b6d8f',
    },
  ],
  operations: DEAL_OPERATIONS,
};
