// The documentation of the cases operations beside their contract: the errors come from
// the contract's constructors and the request schemas (shared/src/http/operation-docs.ts).
import { caseNotFound, clientNotFound, noFieldsToUpdate, userNotFound } from '@lpm/shared/errors';
import type { OperationDocs, ServiceDocs } from '@lpm/shared/http/operation-docs';
import { ID_RULE, LIST_RULE, PUT_RULE, schemaMessage } from '@lpm/shared/http/operation-docs';
import { duplicateNumber, invalidCnjNumber, invalidPhase, reservedIdempotencyKey } from './case-errors.ts';

export const CASE_OPERATIONS: OperationDocs = {
  'GET /v1/cases': {
    operationId: 'listCases',
    summary: 'List cases',
    description: `The team's cases, newest first by default. \`search\` matches title or number, ignoring case and accents; \`from\`/\`to\` compare the creation day in the team's time zone. \`sort=priority\` orders by meaning (alta > media > baixa). ${LIST_RULE}`,
    errors: [schemaMessage('status'), schemaMessage('priority'), schemaMessage('sort')],
  },
  'POST /v1/cases': {
    operationId: 'createCase',
    summary: 'Create a case',
    description:
      "Creates a case with status `ativo` and counts 0. `phase` defaults to the first phase of the team's kanban, `priority` to media. `number` (CNJ or internal) is unique in the team; a CNJ number is read into `number_info`. Emits `case.created`.",
    examples: {
      trabalhista: {
        summary: 'A labour case for a client',
        value: {
          title: 'Reclamação trabalhista - Maria Santos',
          number: '1001234-56.2023.5.02.0001',
          area: 'Trabalhista',
          subject: 'Horas extras',
          priority: 'alta',
          client_id: 'cli_01jd3k8q5x0v7m2n4p6r8t0w2y',
          sla_date: '2026-12-20',
          labels: ['urgente'],
        },
      },
    },
    errors: [
      invalidPhase(),
      schemaMessage('priority'),
      reservedIdempotencyKey(),
      clientNotFound(),
      userNotFound(),
      duplicateNumber(),
      invalidCnjNumber(),
    ],
  },
  'GET /v1/cases/{id}': {
    operationId: 'getCase',
    summary: 'Read a case',
    description: `The case in its detail shape: client with e-mail and phone, responsible with e-mail, \`number_info\`. ${ID_RULE}`,
    errors: [caseNotFound()],
  },
  'PUT /v1/cases/{id}': {
    operationId: 'updateCase',
    summary: 'Update a case',
    description: `${PUT_RULE} The response also has \`title\`. \`status\` moves ativo <-> arquivado (arquivado emits \`case.archived\`, restoring emits \`case.updated\`). A phase change emits \`case.phase_changed\` and \`case.updated\`; other changes \`case.updated\`.`,
    examples: { phase: { summary: 'Into review, higher priority', value: { phase: 'em-revisão', priority: 'alta' } } },
    errors: [
      invalidPhase(),
      schemaMessage('priority'),
      noFieldsToUpdate(),
      caseNotFound(),
      clientNotFound(),
      userNotFound(),
      duplicateNumber(),
      invalidCnjNumber(),
    ],
  },
  'DELETE /v1/cases/{id}': {
    operationId: 'archiveCase',
    summary: 'Archive a case',
    description:
      'ativo -> arquivado (soft delete, `archived_at` set); archiving an archived case answers 200. Emits `case.archived`.',
    errors: [caseNotFound()],
  },
  'GET /v1/cases/{id}/timeline': {
    operationId: 'getCaseTimeline',
    summary: "Read a case's timeline",
    description:
      'The events of the case, newest first, without a pagination block: case_created, phase_change, status_change, case_updated (the changed field names in the description), activity_added, activity_completed, document_added, publication_received (a court publication from the DJEN matched or linked to the case). `limit` defaults to 50, at most 100.',
    errors: [caseNotFound()],
  },
  'GET /v1/cases/{id}/activities': {
    operationId: 'listCaseActivities',
    summary: "List a case's activities",
    description: `The activities linked to the case, any status. ${LIST_RULE}`,
    errors: [schemaMessage('sort'), caseNotFound()],
  },
};

export const CASE_DOCS: ServiceDocs = {
  tags: [
    {
      name: 'Cases',
      prefix: '/v1/cases',
      description: 'Legal matters, consultancies and contracts, moved through the team kanban.',
      idExample: 'case_01jd3k9a1b2c3d4e5f6g7h8j9k',
    },
  ],
  operations: CASE_OPERATIONS,
};
