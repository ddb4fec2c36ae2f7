// The documentation of the webhooks portal sessions beside their contract (shared/src/http/operation-docs.ts).
import { schemaMessage, type OperationDocs, type OperationTag } from '@lpm/shared/http/operation-docs';
import { portalSessionNotFound } from './portal-errors.ts';

export const PORTAL_TAG: OperationTag = {
  name: 'Webhooks portal',
  prefix: '/v1/webhooks/portal-sessions',
  description:
    "Links to the webhooks portal the gateway serves at `/portal`, where a team's admin manages its webhooks in a browser (admin scope).",
};

export const PORTAL_OPERATIONS: OperationDocs = {
  'POST /v1/webhooks/portal-sessions': {
    operationId: 'createPortalSession',
    summary: 'Open a webhooks portal session',
    description:
      "A link to the webhooks portal the gateway serves at `/portal`, for the team's admin to manage endpoints, deliveries, secrets and test events in a browser. " +
      'The token it carries is good for the `/v1/webhooks` routes of this team only (any other route answers it 401), until `expires_at` or its revocation. ' +
      "The page may be framed by the origins in the team's settings (`portal.allowed_origins`). " +
      'An `Idempotency-Key` is not replayed here: the token is never stored, so it cannot be answered again, and a repeated request opens another session (one left unused just expires).',
    examples: {
      default: { summary: 'One hour (the default)', value: {} },
      day: { summary: 'A day', value: { expires_in_minutes: 1440 } },
    },
    errors: [schemaMessage('expires_in_minutes')],
  },
  'DELETE /v1/webhooks/portal-sessions/{id}': {
    operationId: 'revokePortalSession',
    summary: 'Revoke a webhooks portal session',
    description: 'Its token is refused within a second. Revoking a revoked session answers its first revocation time.',
    errors: [portalSessionNotFound()],
  },
};
