// The documentation of the the gateway's team settings operations beside their contract: the errors come from
// the contract's constructors and the request schemas (shared/src/http/operation-docs.ts).
import { noFieldsToUpdate } from '@lpm/shared/errors';
import { type OperationDocs, type OperationTag, schemaMessage } from '@lpm/shared/http/operation-docs';
import { duplicateClosureDate, duplicatePhase, phaseInUse } from './settings-errors.ts';

export const SETTINGS_TAG: OperationTag = {
  name: 'Settings',
  prefix: '/v1/settings',
  description: 'Team settings: time zone, pipeline and kanban phases, court calendar (admin scope).',
};

export const SETTINGS_OPERATIONS: OperationDocs = {
  'GET /v1/settings': {
    operationId: 'getSettings',
    summary: "Read the team's settings",
    description:
      "The team's time zone, deal pipeline phases (with suggested probabilities), case kanban phases, court calendar and CNJ number check.",
  },
  'PUT /v1/settings': {
    operationId: 'updateSettings',
    summary: "Change the team's settings",
    description:
      'Changes any of the settings; the next request of the team sees them. A phase still used by a case or deal cannot be removed. A court calendar change re-computes the due dates of deadline activities computed from rules.',
    errors: [
      schemaMessage('timezone'),
      duplicatePhase('deal_phases', 'proposta'),
      duplicateClosureDate('2026-12-24'),
      schemaMessage('cnj_check'),
      noFieldsToUpdate(),
      phaseInUse('deal_phases', ['proposta']),
    ],
  },
};
