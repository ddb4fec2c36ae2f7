// The documentation of the webhooks operations beside their contract: the errors come from
// the contract's constructors and the request schemas (shared/src/http/operation-docs.ts).
import { noFieldsToUpdate } from '@lpm/shared/errors';
import type { OperationDocs, ServiceDocs } from '@lpm/shared/http/operation-docs';
import { LIST_RULE, PUT_RULE, schemaMessage } from '@lpm/shared/http/operation-docs';
import {
  deliveryNotFound,
  deliveryPending,
  recoverSinceInFuture,
  recoverSinceTooOld,
  recoverUntilBeforeSince,
  recoveryNotFound,
  recoveryRunning,
  urlAlreadyRegistered,
  urlNotReachable,
  webhookInactive,
  webhookLimitReached,
  webhookNotFound,
} from './webhook-errors.ts';
import { MAX_RECOVERED, RECOVER_WINDOW_DAYS } from './webhook-schemas.ts';

export const WEBHOOK_OPERATIONS: OperationDocs = {
  'GET /v1/webhooks': {
    operationId: 'listWebhooks',
    summary: 'List webhooks',
    description:
      "All of the team's webhooks (at most 25), without a pagination block, with delivery counters: `total_deliveries` and `failed_deliveries` count attempts, `success_rate` is successful attempts / attempts x 100 (one decimal, 100 when none); test sends are counted apart, in `test_deliveries` and `test_failed_deliveries`.",
  },
  'POST /v1/webhooks': {
    operationId: 'createWebhook',
    summary: 'Create a webhook',
    description:
      'Subscribes an HTTPS URL to events (`"*"` for every event). The host must resolve to a public address; a signed `ping` must then be answered with a 2xx within 5 seconds. The response carries the `secret`, shown only this once: it signs every delivery (see the webhooks section). `rate_limit` (1 to 1000, default null: none) caps the deliveries per second to the URL, across every sender: deliveries above it wait their turn, none is dropped.',
    examples: {
      cases: {
        summary: 'Case and deal events',
        value: {
          url: 'https://hooks.example.com/lpm',
          events: ['case.created', 'case.phase_changed', 'deal.won'],
          description: 'CRM sync',
        },
      },
      limited: {
        summary: 'Every event, at most 5 a second',
        value: { url: 'https://hooks.example.com/all', events: ['*'], rate_limit: 5 },
      },
    },
    errors: [
      schemaMessage('url'),
      schemaMessage('events'),
      schemaMessage('rate_limit'),
      urlAlreadyRegistered(),
      urlNotReachable(),
      webhookLimitReached(25),
    ],
  },
  'GET /v1/webhooks/event-types': {
    operationId: 'listWebhookEventTypes',
    summary: 'List event types',
    description:
      "Every event the platform emits, without a pagination block: when it is sent, an example delivery, and the JSON Schema of a delivery's body. The schema's `data.object` refers to the resource's schema in this document (`/v1/openapi.json#/components/schemas/...`), resolved against the API's address. The same catalog describes each event in the webhooks section.",
  },
  'GET /v1/webhooks/{id}': {
    operationId: 'getWebhook',
    summary: 'Get a webhook',
    description:
      'One webhook with its delivery counters (as in the list) and the state of its secret: `secret_rotated_at` (null before any rotation) and `previous_secret_expires_at`, when the last of the secrets it replaced stops signing (null when none signs). The secret itself is never shown again.',
    errors: [webhookNotFound()],
  },
  'POST /v1/webhooks/{id}/secret/rotate': {
    operationId: 'rotateWebhookSecret',
    summary: "Rotate a webhook's secret",
    description:
      "Replaces the signing secret; the new one is in the response, shown only this once. The secret it replaces keeps signing beside it for `previous_expires_in_hours` (0 to 72, default 24 when the body is `{}` or empty; 0 stops it at once): meanwhile `webhook-signature` carries one `v1,` signature per secret, the new one first, and a Standard Webhooks library verifies with either. `X-Service-Signature` is always the new secret's alone. At most 3 replaced secrets sign at once; a fourth rotation drops the one replaced longest ago.",
    examples: { three_days: { summary: 'Keep the old secret for 72 hours', value: { previous_expires_in_hours: 72 } } },
    errors: [schemaMessage('previous_expires_in_hours'), webhookNotFound()],
  },
  'PUT /v1/webhooks/{id}': {
    operationId: 'updateWebhook',
    summary: 'Update a webhook',
    description: `${PUT_RULE} A new \`url\` is checked like a new webhook's. \`active: true\` re-activates a webhook (deactivated after 6 consecutive failed attempts, or by a 410 Gone) and resets its failure count. \`rate_limit: null\` removes the limit.`,
    examples: {
      reactivate: {
        summary: 'More events, active again',
        value: { events: ['case.created', 'case.updated'], active: true },
      },
    },
    errors: [
      schemaMessage('url'),
      schemaMessage('events'),
      schemaMessage('rate_limit'),
      noFieldsToUpdate(),
      webhookNotFound(),
      urlAlreadyRegistered(),
      urlNotReachable(),
    ],
  },
  'DELETE /v1/webhooks/{id}': {
    operationId: 'deleteWebhook',
    summary: 'Delete a webhook',
    description: 'Removes the webhook (`deleted: true`) and its delivery history.',
    errors: [webhookNotFound()],
  },
  'GET /v1/webhooks/{id}/deliveries': {
    operationId: 'listWebhookDeliveries',
    summary: "List a webhook's deliveries",
    description: `Each event sent to the webhook with its attempts (status code, latency, error class, the first 4 KiB of the answer) and the next attempt's time. Attempts run at 0, 5 min, 30 min, 2 h, 12 h and 24 h; after a 429 or 503 with \`Retry-After\` (seconds or an HTTP date) the next one waits at least that long, at most 24 h. A 410 Gone deactivates the webhook at once. \`status\`, \`event_type\` and \`event_id\` narrow the list to the deliveries that match. ${LIST_RULE}`,
    errors: [schemaMessage('sort'), schemaMessage('status'), webhookNotFound()],
  },
  'POST /v1/webhooks/{id}/deliveries/{delivery_id}/retry': {
    operationId: 'retryWebhookDelivery',
    summary: 'Retry a delivery',
    description: 'Sends a failed delivery again now, with the same event id.',
    errors: [webhookNotFound(), deliveryNotFound(), webhookInactive(), deliveryPending()],
  },
  'POST /v1/webhooks/{id}/test': {
    operationId: 'sendWebhookTest',
    summary: 'Send a test event',
    description:
      'Sends the example of an event type from the catalog (`GET /v1/webhooks/event-types`) to the webhook, signed as usual, with a new event id and `"test": true` in the body. One attempt, in the background, without retries: it shows in the delivery log with `test: true`, and is counted apart from the other deliveries (`test_deliveries`, `test_failed_deliveries`); a failed test send never deactivates the webhook.',
    examples: { created: { summary: 'A case.created example', value: { event: 'case.created' } } },
    errors: [schemaMessage('event'), webhookNotFound(), webhookInactive()],
  },
  'POST /v1/webhooks/{id}/recover': {
    operationId: 'recoverWebhook',
    summary: 'Recover failed and skipped deliveries',
    description: `Sends again, in the background and oldest first, every delivery made between \`since\` (at most ${RECOVER_WINDOW_DAYS} days back) and \`until\` (default now) that failed for good, or that was \`skipped\` because the webhook was inactive when its event came: one more attempt each, with the same event id and body. At most ${MAX_RECOVERED.toLocaleString('en')} deliveries a call (\`total\`); another call from the last one's time recovers the rest. Answers 202 with the recovery (\`completed\` at once when there is nothing to send); its progress is at \`GET /v1/webhooks/{id}/recoveries/{recovery_id}\`. One recovery of a webhook runs at a time (409 while one does), and one whose process stops is resumed by another. The webhook must be active.`,
    examples: {
      since: { summary: 'Everything since a time', value: { since: '2026-11-27T09:00:00.000Z' } },
      window: { summary: 'A window', value: { since: '2026-11-27T09:00:00.000Z', until: '2026-11-27T12:00:00.000Z' } },
    },
    errors: [
      schemaMessage('since'),
      schemaMessage('until'),
      recoverSinceTooOld(RECOVER_WINDOW_DAYS),
      recoverSinceInFuture(),
      recoverUntilBeforeSince(),
      webhookNotFound(),
      recoveryRunning(),
      webhookInactive(),
    ],
  },
  'GET /v1/webhooks/{id}/recoveries/{recovery_id}': {
    operationId: 'getWebhookRecovery',
    summary: "A recovery's progress",
    description:
      '`queued` of `total` deliveries re-queued so far, `running` until all are, then `completed` with `finished_at`.',
    errors: [webhookNotFound(), recoveryNotFound()],
  },
};

export const WEBHOOK_DOCS: ServiceDocs = {
  tags: [
    {
      name: 'Webhooks',
      prefix: '/v1/webhooks',
      description: 'Subscriptions that push signed event notifications to an HTTPS URL (admin scope).',
      idExample: 'wh_01jd3kc4d6e8f0g2h4j6k8m0n2',
    },
  ],
  operations: WEBHOOK_OPERATIONS,
};
