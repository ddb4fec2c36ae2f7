import { EVENT_TYPES } from '@lpm/shared/events';
import { listQuerySchema } from '@lpm/shared/http/pagination';
import * as s from '@lpm/shared/http/schemas';

const { string, nullableString, integer, nullableInteger, number, boolean: bool, strings, freeObject } = s.out;

// No C0 control or DEL (the URL parser drops tab, CR and LF silently); the guard checks the rest.
const url = s.text(2048, { pattern: '^[^\\u0000-\\u001f\\u007f]*$', 'x-message': 'Invalid URL' });
const eventName = s.text(100, { 'x-message': 'Invalid events' });
// Which names are events is checked in the domain (400 Invalid events).
const events = s.arrayOf(eventName, { maxItems: 50, 'x-message': 'Invalid events' });
const description = s.nullable(s.text());
const id = s.typed<string>({ type: 'string', maxLength: 100 });

/** Deliveries per second to one webhook, at most. */
export const MAX_RATE_LIMIT = 1000;
const rateLimit = s.nullable(
  s.typed<number>({
    type: 'integer',
    minimum: 1,
    maximum: MAX_RATE_LIMIT,
    'x-message': `rate_limit must be an integer from 1 to ${MAX_RATE_LIMIT}, or null`,
  }),
);

export const createWebhookBody = s.named(
  'CreateWebhookRequest',
  'An HTTPS URL and the events it receives ("*" for all); rate_limit caps its deliveries per second.',
  s.object({ url, events, description, rate_limit: rateLimit }, ['url', 'events']),
);
export const updateWebhookBody = s.named(
  'UpdateWebhookRequest',
  'Any subset of the webhook fields; active true re-activates it; rate_limit null removes the limit.',
  s.object({ url, events, description, active: s.boolean(), rate_limit: rateLimit }),
);

/** How long a rotated-out secret keeps signing: by default, and at most. */
export const DEFAULT_PREVIOUS_EXPIRES_IN_HOURS = 24;
export const MAX_PREVIOUS_EXPIRES_IN_HOURS = 72;
const previousExpiresInHours = s.typed<number>({
  type: 'integer',
  minimum: 0,
  maximum: MAX_PREVIOUS_EXPIRES_IN_HOURS,
  default: DEFAULT_PREVIOUS_EXPIRES_IN_HOURS,
  'x-message': `previous_expires_in_hours must be an integer from 0 to ${MAX_PREVIOUS_EXPIRES_IN_HOURS}`,
});
export const rotateSecretBody = s.named(
  'RotateWebhookSecretRequest',
  'How long the secret being replaced keeps signing beside the new one, in hours (0 stops it at once).',
  s.object({ previous_expires_in_hours: previousExpiresInHours }),
);

export const testSendBody = s.named(
  'WebhookTestRequest',
  'The event type whose catalog example is sent (GET /v1/webhooks/event-types).',
  s.object({ event: s.enumOf(EVENT_TYPES, 'event must be one of the event types of GET /v1/webhooks/event-types') }, [
    'event',
  ]),
);

/** How far back a recovery may reach, and the most deliveries one re-queues. */
export const RECOVER_WINDOW_DAYS = 14;
export const MAX_RECOVERED = 10_000;
const instant = (field: string) =>
  s.typed<string>({ type: 'string', format: 'date-time', 'x-message': `${field} must be an ISO 8601 date-time` });
export const recoverBody = s.named(
  'WebhookRecoverRequest',
  `The window whose deliveries are sent again: since (at most ${RECOVER_WINDOW_DAYS} days back) until (default now).`,
  s.object({ since: instant('since'), until: instant('until') }, ['since']),
);

export const deliveryParams = s.object({ id, delivery_id: id }, ['id', 'delivery_id']);
export const recoveryParams = s.object({ id, recovery_id: id }, ['id', 'recovery_id']);
/** A delivery's states, as the log shows and filters them. */
export const DELIVERY_STATUS_FILTER = ['pending', 'succeeded', 'failed', 'skipped'] as const;
export const deliveriesQuery = listQuerySchema(['created_at'], {
  status: s.enumOf(DELIVERY_STATUS_FILTER, 'Invalid status'),
  event_type: s.text(100, { 'x-message': 'Invalid event_type' }),
  event_id: s.text(100, { 'x-message': 'Invalid event_id' }),
});
export type DeliveriesQuery = s.Static<typeof deliveriesQuery>;

export type CreateWebhookBody = s.Static<typeof createWebhookBody>;
export type UpdateWebhookBody = s.Static<typeof updateWebhookBody>;
export type RotateSecretBody = s.Static<typeof rotateSecretBody>;
export type RecoverBody = s.Static<typeof recoverBody>;

const webhook = {
  id: string,
  url: string,
  events: strings,
  description: nullableString,
  active: bool,
  rate_limit: nullableInteger,
  created_at: string,
  updated_at: string,
};

const attempt = s.named(
  'DeliveryAttempt',
  'One attempt of a delivery.',
  s.shape({
    attempt: integer,
    at: string,
    success: bool,
    status_code: nullableInteger,
    latency_ms: integer,
    error_class: nullableString,
    response_body: nullableString,
  }),
);

const delivery = {
  id: string,
  event_id: string,
  event_type: string,
  status: string,
  attempts_count: integer,
  /** A test send (POST /v1/webhooks/{id}/test): its attempts are counted apart. */
  test: bool,
};

const webhookCreated = s.named(
  'WebhookCreated',
  'A created webhook, with its secret: shown only this once.',
  s.shape({ ...webhook, secret: string }),
);
/** When the secret was last rotated (null before any rotation), and the latest expiry of the secrets it replaced that still sign (null when none does). */
const rotation = { secret_rotated_at: nullableString, previous_secret_expires_at: nullableString };
const webhookListItem = s.named(
  'Webhook',
  'A webhook with its delivery counters and the state of its secret (never the secret itself).',
  s.shape({
    ...webhook,
    ...rotation,
    last_triggered_at: nullableString,
    success_rate: number,
    total_deliveries: integer,
    failed_deliveries: integer,
    test_deliveries: integer,
    test_failed_deliveries: integer,
  }),
);
const secretRotated = s.named(
  'WebhookSecretRotated',
  'The new secret, shown only this once; the secrets it replaced keep signing until previous_secret_expires_at.',
  s.shape({ id: string, secret: string, secret_rotated_at: string, previous_secret_expires_at: nullableString }),
);
const deliveryItem = s.named(
  'Delivery',
  'An event sent to a webhook, with its attempts.',
  s.shape({
    ...delivery,
    next_attempt_at: nullableString,
    attempts: s.arrayOf(attempt),
    created_at: string,
    updated_at: string,
  }),
);
const deliveryRetried = s.named('DeliveryRetried', 'A delivery sent again.', s.shape(delivery));
const testQueued = s.named(
  'WebhookTestQueued',
  "A test send's delivery, queued: its attempt shows in the delivery log.",
  s.shape(delivery),
);

export type WebhookCreated = s.Static<typeof webhookCreated>;
export type WebhookListItem = s.Static<typeof webhookListItem>;
export type DeliveryItem = s.Static<typeof deliveryItem>;
export type DeliveryRetried = s.Static<typeof deliveryRetried>;
export type WebhookTestQueued = s.Static<typeof testQueued>;
export type WebhookSecretRotated = s.Static<typeof secretRotated>;

const webhookDeleted = s.named('WebhookDeleted', 'A removed webhook.', s.shape({ id: string, deleted: bool }));
export type WebhookDeleted = s.Static<typeof webhookDeleted>;

const eventType = s.named(
  'WebhookEventType',
  "An event the platform emits: when, an example delivery, and the JSON Schema of a delivery's body (its data.object refers to the resource's schema in /v1/openapi.json).",
  s.shape({ type: string, description: string, example: freeObject, schema: freeObject }),
);
export type WebhookEventType = s.Static<typeof eventType>;

const recoveryStarted = { id: string, status: string, queued: integer, total: integer };
const recoveryQueued = s.named(
  'WebhookRecoveryStarted',
  'A recovery under way (running) or done at once (completed, nothing to send): queued of total deliveries re-queued so far.',
  s.shape(recoveryStarted),
);
const recovery = s.named(
  'WebhookRecovery',
  "A recovery's progress: queued of total deliveries re-queued, oldest first; completed once all are.",
  s.shape({
    ...recoveryStarted,
    webhook_id: string,
    since: string,
    until: string,
    created_at: string,
    finished_at: nullableString,
  }),
);
export type WebhookRecoveryStarted = s.Static<typeof recoveryQueued>;
export type WebhookRecovery = s.Static<typeof recovery>;

export const responses = {
  created: s.okResponse(201, webhookCreated),
  updated: s.okResponse(
    200,
    s.named('WebhookChanges', 'id, the fields sent and updated_at.', s.shape(webhook), { partial: true }),
  ),
  deleted: s.okResponse(200, webhookDeleted),
  list: s.okResponse(200, s.arrayOf(webhookListItem)),
  one: s.okResponse(200, webhookListItem),
  rotated: s.okResponse(200, secretRotated),
  deliveries: s.pageResponse(deliveryItem),
  retried: s.okResponse(200, deliveryRetried),
  testQueued: s.okResponse(202, testQueued),
  recovering: s.okResponse(202, recoveryQueued),
  recovery: s.okResponse(200, recovery),
  eventTypes: s.okResponse(200, s.arrayOf(eventType)),
};
