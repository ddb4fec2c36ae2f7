// What the route schemas cannot say about each public operation: its stable
// operationId, a summary, the spec's rules as a description, request examples from
// the spec's domain, and the rows of the spec's error table (with decisions §1-§5)
// that this operation answers beyond those every operation shares (document.ts).
// Keyed by "METHOD /path" as the OpenAPI document writes paths.

export interface OperationDoc {
  operationId: string;
  summary: string;
  description: string;
  /** Named request body examples. */
  examples?: Record<string, { summary: string; value: unknown }>;
  /** Status -> the exact messages this operation's own rules answer with. */
  errors?: Partial<Record<400 | 404 | 409 | 422, string[]>>;
}

const IDS = 'Ids carry their kind prefix; an id of another kind, or of another team, is 404.';
const PUT_RULE = 'Takes any subset of the create fields; only those sent change. The response holds `id`, each field sent (normalized) and `updated_at`. An empty body is 400 `No fields to update`; a read-only field is 400 `Unknown field`. `null` unlinks a link.';
const LIST_RULE = 'Paginated: `page` (from 1), `limit` (1 to 100, default 20), `sort` (one field, `-` for descending; ties break by id). A page past the end gives `data: []` with the true `total`.';

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

export const OPERATIONS: Record<string, OperationDoc> = {
  // Deals
  'GET /v1/deals': {
    operationId: 'listDeals',
    summary: 'List deals',
    description: `The team's deals, newest first by default (\`-created_at\`). Filters combine; \`from\`/\`to\` compare the creation day in the team's time zone, inclusive. ${LIST_RULE}`,
    errors: { 400: ['Invalid status', 'Invalid sort field'] },
  },
  'POST /v1/deals': {
    operationId: 'createDeal',
    summary: 'Create a deal',
    description:
      "Creates a deal with status `ativo`. `phase` defaults to the first phase of the team's pipeline and `probability` to that phase's suggested probability; `currency` defaults to BRL. `client_id` and `responsible_id` must exist in the team. Emits `deal.created`.",
    examples: { proposta: { summary: 'A deal in proposta for a client', value: dealExample } },
    errors: { 400: ['Invalid phase', 'Invalid probability'], 404: ['Client not found', 'User not found'] },
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
    description: `The deal in its detail shape: client and responsible as nested objects with e-mail, \`activities_count\` and \`ai_insights\` (win probability, health and risk factors computed from the deal's phase, age and activity). ${IDS}`,
    errors: { 404: ['Deal not found'] },
  },
  'PUT /v1/deals/{id}': {
    operationId: 'updateDeal',
    summary: 'Update a deal',
    description: `${PUT_RULE} \`status\` cannot change here (use won, lost or DELETE). Sending \`phase\` is a phase move (allowed only while ativo), which also returns \`previous_phase\` and \`phase_changed_at\` and emits \`deal.phase_changed\`. Emits \`deal.updated\`.`,
    examples: { value: { summary: 'A new value and probability', value: { value: 52000, probability: 60 } } },
    errors: { 400: ['Invalid phase', 'Invalid probability', 'No fields to update'], 404: ['Deal not found', 'Client not found', 'User not found'], 422: ['Deal already closed', 'Deal is archived'] },
  },
  'PUT /v1/deals/{id}/phase': {
    operationId: 'moveDealPhase',
    summary: 'Move a deal to another phase',
    description: 'Changes `phase` without changing `status`, only while the deal is ativo, and returns `previous_phase` and `phase_changed_at`. Emits `deal.phase_changed` and `deal.updated`.',
    examples: { negociacao: { summary: 'Into negotiation', value: { phase: 'negociacao', notes: 'Cliente pediu revisão dos honorários' } } },
    errors: { 400: ['Invalid phase'], 404: ['Deal not found'], 422: ['Deal already closed', 'Deal is archived'] },
  },
  'PUT /v1/deals/{id}/won': {
    operationId: 'markDealWon',
    summary: 'Mark a deal won',
    description:
      'ativo -> ganho. Stores `final_value` (default: the deal\'s value) and `won_at`. With `create_case: true` a case is created first (title: `case_data.title` or the deal\'s title; area from `case_data.area`; client and responsible from the deal) and returned as `case_created`; a retried request creates no second case. Of concurrent won/lost requests exactly one succeeds. Emits `deal.won`.',
    examples: { withCase: { summary: 'Won, opening the case', value: { final_value: 45000, notes: 'Assinado em reunião', create_case: true, case_data: { title: 'Assessoria tributária - Metalúrgica Souza', area: 'Tributário' } } } },
    errors: { 404: ['Deal not found'], 422: ['Deal already closed', 'Deal is archived'] },
  },
  'PUT /v1/deals/{id}/lost': {
    operationId: 'markDealLost',
    summary: 'Mark a deal lost',
    description: 'ativo -> perdido. Stores `loss_reason`, `competitor` and `lost_at`. Of concurrent won/lost requests exactly one succeeds. Emits `deal.lost`.',
    examples: { price: { summary: 'Lost on price', value: { loss_reason: 'Preço', competitor: 'Escritório Lima & Associados', notes: 'Proposta 20% abaixo' } } },
    errors: { 404: ['Deal not found'], 422: ['Deal already closed', 'Deal is archived'] },
  },
  'DELETE /v1/deals/{id}': {
    operationId: 'archiveDeal',
    summary: 'Archive a deal',
    description: 'Archives the deal from ativo, ganho or perdido (status arquivado, `archived_at` set). Archiving an archived deal answers 200 with the existing `archived_at`.',
    errors: { 404: ['Deal not found'] },
  },

  // Clients
  'GET /v1/clients': {
    operationId: 'listClients',
    summary: 'List clients',
    description: `The team's clients, newest first by default. \`search\` matches name, e-mail, CPF or CNPJ, ignoring case and accents; a document also matches when the query is its digits only. ${LIST_RULE}`,
    errors: { 400: ['Invalid type', 'Invalid status', 'Invalid segment', 'Invalid sort field'] },
  },
  'POST /v1/clients': {
    operationId: 'createClient',
    summary: 'Create a client (PF or PJ)',
    description:
      'Creates an individual (`type` PF, with the PF fields) or a company (`type` PJ, with the PJ fields), status `active`, `cases_count` 0. The CPF (NNN.NNN.NNN-NN) and CNPJ (NN.NNN.NNN/NNNN-NN; letters allowed in the first 12 positions, stored upper case) formats are checked, not their check digits, and are unique in the team among all clients. Emits `client.created`.',
    examples: {
      pf: {
        summary: 'An individual with a CPF',
        value: { type: 'PF', name: 'Maria da Silva Santos', email: 'maria.santos@example.com', phone: '+55 11 98765-4321', cpf: '123.456.789-00', birth_date: '1985-03-15', gender: 'feminino', profession: 'Engenheira', segment: 'premium', address: { street: 'Rua das Flores', number: '123', complement: 'Apto 45', neighborhood: 'Jardim Paulista', city: 'São Paulo', state: 'SP', zip_code: '01234-567', country: 'Brasil' } },
      },
      pj: { summary: 'A company with a CNPJ', value: { type: 'PJ', name: 'Metalúrgica Souza', legal_name: 'Metalúrgica Souza Ltda.', cnpj: '12.345.678/0001-90', contact_person: 'João Souza', segment: 'vip' } },
    },
    errors: { 400: ['Invalid type', 'Invalid CPF format', 'Invalid CNPJ format'], 422: ['Duplicate CPF', 'Duplicate CNPJ'] },
  },
  'GET /v1/clients/{id}': {
    operationId: 'getClient',
    summary: 'Read a client',
    description: `The full client: the fields of its type, the address with all eight parts, notes, tags, metadata and \`cases_count\` (cases linked to it, any status). ${IDS}`,
    errors: { 404: ['Client not found'] },
  },
  'PUT /v1/clients/{id}': {
    operationId: 'updateClient',
    summary: 'Update a client',
    description: `${PUT_RULE} \`status: "active"\` reactivates an inactive client; \`status: "inactive"\` follows the rule of DELETE. The type cannot change. Emits \`client.updated\`.`,
    examples: { segment: { summary: 'A new phone and segment', value: { phone: '+55 11 91234-5678', segment: 'vip', notes: 'Cliente desde 2019' } } },
    errors: { 400: ['Invalid CPF format', 'Invalid CNPJ format', 'No fields to update'], 404: ['Client not found'], 422: ['Duplicate CPF', 'Duplicate CNPJ', 'Client has active cases', 'Client type cannot be changed'] },
  },
  'DELETE /v1/clients/{id}': {
    operationId: 'deactivateClient',
    summary: 'Deactivate a client',
    description: 'active -> inactive (soft delete, `deactivated_at` set), refused while the client has ativo cases (checked against the cases service at that moment). Deactivating an inactive client answers 200. Emits `client.deactivated`.',
    errors: { 404: ['Client not found'], 422: ['Client has active cases'] },
  },
  'GET /v1/clients/{id}/cases': {
    operationId: 'listClientCases',
    summary: "List a client's cases",
    description: `The cases linked to the client, any status. ${LIST_RULE}`,
    errors: { 400: ['Invalid sort field'], 404: ['Client not found'] },
  },

  // Cases
  'GET /v1/cases': {
    operationId: 'listCases',
    summary: 'List cases',
    description: `The team's cases, newest first by default. \`search\` matches title or number, ignoring case and accents; \`from\`/\`to\` compare the creation day in the team's time zone. \`sort=priority\` orders by meaning (alta > media > baixa). ${LIST_RULE}`,
    errors: { 400: ['Invalid status', 'Invalid priority', 'Invalid sort field'] },
  },
  'POST /v1/cases': {
    operationId: 'createCase',
    summary: 'Create a case',
    description:
      "Creates a case with status `ativo` and counts 0. `phase` defaults to the first phase of the team's kanban, `priority` to media. `number` (CNJ or internal) is unique in the team; a CNJ number is read into `number_info`. Emits `case.created`.",
    examples: {
      trabalhista: {
        summary: 'A labour case for a client',
        value: { title: 'Reclamação trabalhista - Maria Santos', number: '1001234-56.2023.5.02.0001', area: 'Trabalhista', subject: 'Horas extras', priority: 'alta', client_id: 'cli_01jd3k8q5x0v7m2n4p6r8t0w2y', sla_date: '2026-12-20', labels: ['urgente'] },
      },
    },
    errors: { 400: ['Invalid phase', 'Invalid priority', 'Idempotency-Key must not start with deal-won-case:'], 404: ['Client not found', 'User not found'], 422: ['Duplicate case number', 'Invalid CNJ number'] },
  },
  'GET /v1/cases/{id}': {
    operationId: 'getCase',
    summary: 'Read a case',
    description: `The case in its detail shape: client with e-mail and phone, responsible with e-mail, \`number_info\`. ${IDS}`,
    errors: { 404: ['Case not found'] },
  },
  'PUT /v1/cases/{id}': {
    operationId: 'updateCase',
    summary: 'Update a case',
    description: `${PUT_RULE} The response also has \`title\`. \`status\` moves ativo <-> arquivado (arquivado emits \`case.archived\`, restoring emits \`case.updated\`). A phase change emits \`case.phase_changed\` and \`case.updated\`; other changes \`case.updated\`.`,
    examples: { phase: { summary: 'Into review, higher priority', value: { phase: 'em-revisão', priority: 'alta' } } },
    errors: { 400: ['Invalid phase', 'Invalid priority', 'No fields to update'], 404: ['Case not found', 'Client not found', 'User not found'], 422: ['Duplicate case number', 'Invalid CNJ number'] },
  },
  'DELETE /v1/cases/{id}': {
    operationId: 'archiveCase',
    summary: 'Archive a case',
    description: 'ativo -> arquivado (soft delete, `archived_at` set); archiving an archived case answers 200. Emits `case.archived`.',
    errors: { 404: ['Case not found'] },
  },
  'GET /v1/cases/{id}/timeline': {
    operationId: 'getCaseTimeline',
    summary: "Read a case's timeline",
    description: 'The events of the case, newest first, without a pagination block: case_created, phase_change, status_change, case_updated (the changed field names in the description), activity_added, activity_completed, document_added. `limit` defaults to 50, at most 100.',
    errors: { 404: ['Case not found'] },
  },
  'GET /v1/cases/{id}/activities': {
    operationId: 'listCaseActivities',
    summary: "List a case's activities",
    description: `The activities linked to the case, any status. ${LIST_RULE}`,
    errors: { 400: ['Invalid sort field'], 404: ['Case not found'] },
  },

  // Activities
  'GET /v1/activities': {
    operationId: 'listActivities',
    summary: 'List activities',
    description: `The team's activities, by \`due_date\` by default. \`from\`/\`to\` compare \`due_date\`; \`overdue=true\` keeps pending or in_progress activities whose due moment has passed. ${LIST_RULE}`,
    errors: { 400: ['Invalid type', 'Invalid status', 'Invalid priority', 'Invalid sort field'] },
  },
  'POST /v1/activities': {
    operationId: 'createActivity',
    summary: 'Create an activity',
    description:
      "Creates an activity with status `pending` (`priority` media by default), linked ids returned flat. The due moment is `due_date` at `due_time` in the team's time zone (23:59 without a time). A `deadline` may send `deadline_rule` instead of `due_date`: the due date is computed on the team's court calendar. A reminder e-mails the assignee `before_minutes` ahead; a recurrence creates the next occurrence when one is completed. Emits `activity.created`, and later `activity.due_soon` (24 h ahead) and `activity.overdue`.",
    errors: { 400: ['Invalid type', 'Invalid status', 'Invalid priority'], 404: ['Case not found', 'Client not found', 'Deal not found', 'User not found'] },
  },
  'GET /v1/activities/overdue': {
    operationId: 'listOverdueActivities',
    summary: 'List overdue activities',
    description: `Pending or in_progress activities whose due moment has passed, with \`days_overdue\` in calendar days of the team's time zone. ${LIST_RULE}`,
    errors: { 400: ['Invalid sort field'] },
  },
  'GET /v1/activities/{id}': {
    operationId: 'getActivity',
    summary: 'Read an activity',
    description: `The activity in its detail shape: case, client, assignee (with e-mail), creator and completer as nested objects. ${IDS}`,
    errors: { 404: ['Activity not found'] },
  },
  'PUT /v1/activities/{id}': {
    operationId: 'updateActivity',
    summary: 'Update an activity',
    description: `${PUT_RULE} Status moves: pending -> in_progress | cancelled | completed; in_progress -> pending | cancelled | completed; completed -> cancelled; cancelled is final. \`status: "completed"\` has the effects of /complete. Changing the due date re-arms the due signals. Emits \`activity.updated\` (and \`activity.completed\`).`,
    examples: { start: { summary: 'Started, due later', value: { status: 'in_progress', due_date: '2026-12-12' } } },
    errors: { 400: ['Invalid type', 'Invalid status', 'Invalid priority', 'No fields to update'], 404: ['Activity not found', 'Case not found', 'Client not found', 'Deal not found', 'User not found'], 422: ['Invalid status transition'] },
  },
  'PUT /v1/activities/{id}/complete': {
    operationId: 'completeActivity',
    summary: 'Complete an activity',
    description: 'pending or in_progress -> completed: sets `completed_at`, `completed_by` (the key\'s user) and `completion_notes`. A recurring activity gets its next occurrence. Emits `activity.completed`.',
    examples: { done: { summary: 'Done, with notes', value: { notes: 'Petição protocolada no PJe' } } },
    errors: { 404: ['Activity not found'], 422: ['Activity already completed', 'Cannot complete cancelled activity'] },
  },
  'DELETE /v1/activities/{id}': {
    operationId: 'deleteActivity',
    summary: 'Delete an activity',
    description: 'Removes a pending, in_progress or cancelled activity (`deleted: true`); a completed activity can only be cancelled.',
    errors: { 404: ['Activity not found'], 422: ['Cannot delete completed activity'] },
  },
  'POST /v1/deadlines/compute': {
    operationId: 'computeDeadline',
    summary: 'Compute a procedural deadline',
    description:
      "Counts a deadline on the team's court calendar (CPC arts. 219, 220 and 224: business days, the start day excluded, weekends, national and court holidays, the recess of art. 220 and the team's closures) and returns the due date with the trail of every day considered. Writes nothing: a read key may call it.",
    errors: { 400: ['start must have exactly one of made_available, published or from', 'days must be an integer from 1 to 365', 'Invalid counting'] },
  },

  // Financial records
  'GET /v1/financial': {
    operationId: 'listFinancialRecords',
    summary: 'List financial records',
    description: `The team's records, by \`-date\` by default; \`from\`/\`to\` compare \`date\`. ${LIST_RULE}`,
    errors: { 400: ['Invalid type', 'Invalid status', 'Invalid date format', 'Invalid sort field'] },
  },
  'POST /v1/financial': {
    operationId: 'createFinancialRecord',
    summary: 'Create a financial record',
    description:
      'Creates a revenue, expense or cost, `pending` by default (or `paid`). `amount` is greater than zero with at most 2 decimals; dates are real calendar days. Emits `financial.created` (and, once its due date passes unpaid, `financial.overdue`).',
    examples: { fees: { summary: 'Fees due from a client', value: { type: 'revenue', category: 'honorarios', description: 'Honorários - parcela 1/3', amount: 5000, date: '2026-11-20', due_date: '2026-12-05', client_id: 'cli_01jd3k8q5x0v7m2n4p6r8t0w2y', payment_method: 'pix' } } },
    errors: { 400: ['Invalid type', 'Invalid amount', 'Invalid date format', 'Invalid status'], 404: ['Case not found', 'Client not found'] },
  },
  'GET /v1/financial/summary': {
    operationId: 'getFinancialSummary',
    summary: 'Financial summary of a period',
    description:
      "Over records dated `from`..`to` (default: the current month) in one `currency` (default BRL): `totals` sum paid records, `pending` sums pending ones, cancelled records count nowhere; `profit = revenue - expense - cost`. Buckets by `group_by`: `by_month` (YYYY-MM), `by_day` or `by_week` (ISO weeks, YYYY-Www), empty buckets included; `by_category` sums paid amounts; `top_clients`: up to 5 by paid revenue.",
    errors: { 400: ['Invalid date format', 'Invalid group_by', 'Invalid currency', 'from must not be after to'] },
  },
  'GET /v1/financial/overdue': {
    operationId: 'listOverdueFinancialRecords',
    summary: 'List overdue financial records',
    description: `Pending records whose due date is before today in the team's time zone, with \`days_overdue\`. ${LIST_RULE}`,
    errors: { 400: ['Invalid sort field'] },
  },
  'GET /v1/financial/{id}': {
    operationId: 'getFinancialRecord',
    summary: 'Read a financial record',
    description: `The record in its detail shape, case and client nested. ${IDS}`,
    errors: { 404: ['Record not found'] },
  },
  'PUT /v1/financial/{id}': {
    operationId: 'updateFinancialRecord',
    summary: 'Update a financial record',
    description: `${PUT_RULE} pending -> paid (\`paid_date\` defaults to today; emits \`financial.paid\`) or cancelled; paid and cancelled are final. The amount, type and date of a paid record cannot change; its notes, description, invoice_number and metadata can.`,
    examples: { paid: { summary: 'Paid by PIX', value: { status: 'paid', paid_date: '2026-12-03', payment_method: 'pix', invoice_number: 'NF-2026-0142' } } },
    errors: { 400: ['Invalid type', 'Invalid amount', 'Invalid date format', 'Invalid status', 'No fields to update'], 404: ['Record not found', 'Case not found', 'Client not found'], 422: ['Invalid status transition', 'Cannot modify paid record'] },
  },
  'DELETE /v1/financial/{id}': {
    operationId: 'cancelFinancialRecord',
    summary: 'Cancel a financial record',
    description: 'pending -> cancelled (`cancelled_at` set); cancelling a cancelled record answers 200. A paid record cannot be cancelled: create a reversal record instead.',
    errors: { 404: ['Record not found'], 422: ['Cannot cancel paid record'] },
  },

  // Webhooks
  'GET /v1/webhooks': {
    operationId: 'listWebhooks',
    summary: 'List webhooks',
    description: "All of the team's webhooks (at most 25), without a pagination block, with delivery counters: `total_deliveries` and `failed_deliveries` count attempts, `success_rate` is successful attempts / attempts x 100 (one decimal, 100 when none).",
  },
  'POST /v1/webhooks': {
    operationId: 'createWebhook',
    summary: 'Create a webhook',
    description:
      'Subscribes an HTTPS URL to events (`"*"` for every event). The host must resolve to a public address; a signed `ping` must then be answered with a 2xx within 5 seconds. The response carries the `secret`, shown only this once: it signs every delivery (see the webhooks section).',
    examples: { cases: { summary: 'Case and deal events', value: { url: 'https://hooks.example.com/lpm', events: ['case.created', 'case.phase_changed', 'deal.won'], description: 'CRM sync' } } },
    errors: { 400: ['Invalid URL', 'Invalid events'], 409: ['URL already registered'], 422: ['URL not reachable', 'Webhook limit reached'] },
  },
  'PUT /v1/webhooks/{id}': {
    operationId: 'updateWebhook',
    summary: 'Update a webhook',
    description: `${PUT_RULE} A new \`url\` is checked like a new webhook's. \`active: true\` re-activates a webhook (deactivated after 6 consecutive failed attempts) and resets its failure count.`,
    examples: { reactivate: { summary: 'More events, active again', value: { events: ['case.created', 'case.updated'], active: true } } },
    errors: { 400: ['Invalid URL', 'Invalid events', 'No fields to update'], 404: ['Webhook not found'], 409: ['URL already registered'], 422: ['URL not reachable'] },
  },
  'DELETE /v1/webhooks/{id}': {
    operationId: 'deleteWebhook',
    summary: 'Delete a webhook',
    description: 'Removes the webhook (`deleted: true`) and its delivery history.',
    errors: { 404: ['Webhook not found'] },
  },
  'GET /v1/webhooks/{id}/deliveries': {
    operationId: 'listWebhookDeliveries',
    summary: "List a webhook's deliveries",
    description: `Each event sent to the webhook with its attempts (status code, latency, error class, the first 4 KiB of the answer) and the next attempt's time. Attempts run at 0, 5 min, 30 min, 2 h, 12 h and 24 h. ${LIST_RULE}`,
    errors: { 400: ['Invalid sort field'], 404: ['Webhook not found'] },
  },
  'POST /v1/webhooks/{id}/deliveries/{delivery_id}/retry': {
    operationId: 'retryWebhookDelivery',
    summary: 'Retry a delivery',
    description: 'Sends a failed delivery again now, with the same event id.',
    errors: { 404: ['Webhook not found', 'Delivery not found'], 422: ['Webhook is inactive', 'Delivery already pending'] },
  },

  // Team settings
  'GET /v1/settings': {
    operationId: 'getSettings',
    summary: "Read the team's settings",
    description: "The team's time zone, deal pipeline phases (with suggested probabilities), case kanban phases, court calendar and CNJ number check.",
  },
  'PUT /v1/settings': {
    operationId: 'updateSettings',
    summary: "Change the team's settings",
    description: 'Changes any of the settings; the next request of the team sees them. A phase still used by a case or deal cannot be removed. A court calendar change re-computes the due dates of deadline activities computed from rules.',
    errors: { 400: ['Invalid time zone', 'Duplicate phase', 'Duplicate closure date', 'Invalid cnj_check', 'No fields to update'], 422: ['Phase in use'] },
  },
};
