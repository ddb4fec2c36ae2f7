import { EVENT_TYPES } from '@lpm/shared/events';
import { listQuerySchema } from '@lpm/shared/http/pagination';
import {
  arrayOf,
  boolean,
  enumOf,
  named,
  nullable,
  object,
  okResponse,
  out,
  pageResponse,
  shape,
  text,
  typed,
  type Static,
} from '@lpm/shared/http/schemas';

const { string, nullableString, integer, nullableInteger, number, boolean: bool, strings, freeObject } = out;

// No C0 control or DEL (the URL parser drops tab, CR and LF silently); the guard checks the rest.
const url = text(2048, { pattern: '^[^\\u0000-\\u001f\\u007f]*$', 'x-message': 'Invalid URL' });
const eventName = text(100, { 'x-message': 'Invalid events' });
// Which names are events is checked in the domain (400 Invalid events).
const events = arrayOf(eventName, { maxItems: 50, 'x-message': 'Invalid events' });
const description = nullable(text());
const id = typed<string>({ type: 'string', maxLength: 100 });

/** Deliveries per second to one webhook, at most. */
export const MAX_RATE_LIMIT = 1000;
const rateLimit = nullable(
  typed<number>({
    type: 'integer',
    minimum: 1,
    maximum: MAX_RATE_LIMIT,
    'x-message': `rate_limit must be an integer from 1 to ${MAX_RATE_LIMIT}, or null`,
  }),
);

export const createWebhookBody = named(
  'CreateWebhookRequest',
  'An HTTPS URL and the events it receives ("*" for all); rate_limit caps its deliveries per second.',
  object({ url, events, description, rate_limit: rateLimit }, ['url', 'events']),
);
export const updateWebhookBody = named(
  'UpdateWebhookRequest',
  'Any subset of the webhook fields; active true re-activates it; rate_limit null removes the limit.',
  object({ url, events, description, active: boolean(), rate_limit: rateLimit }),
);

/** How long a rotated-out secret keeps signing: by default, and at most. */
export const DEFAULT_PREVIOUS_EXPIRES_IN_HOURS = 24;
export const MAX_PREVIOUS_EXPIRES_IN_HOURS = 72;
const previousExpiresInHours = typed<number>({
  type: 'integer',
  minimum: 0,
  maximum: MAX_PREVIOUS_EXPIRES_IN_HOURS,
  default: DEFAULT_PREVIOUS_EXPIRES_IN_HOURS,
  'x-message': `previous_expires_in_hours must be an integer from 0 to ${MAX_PREVIOUS_EXPIRES_IN_HOURS}`,
});
export const rotateSecretBody = named(
  'RotateWebhookSecretRequest',
  'How long the secret being replaced keeps signing beside the new one, in hours (0 stops it at once).',
  object({ previous_expires_in_hours: previousExpiresInHours }),
);

export const testSendBody = named(
  'WebhookTestRequest',
  'The event type whose catalog example is sent (GET /v1/webhooks/event-types).',
  object({ event: enumOf(EVENT_TYPES, 'event must be one of the event types of GET /v1/webhooks/event-types') }, [
    'event',
  ]),
);

/** How far back a recovery may reach, and the most deliveries one re-queues. */
export const RECOVER_WINDOW_DAYS = 14;
export const MAX_RECOVERED = 10_000;
const instant = (field: string) =>
  typed<string>({ type: 'string', format: 'date-time', 'x-message': `${field} must be an ISO 8601 date-time` });
export const recoverBody = named(
  'WebhookRecoverRequest',
  `The window whose deliveries are sent again: since (at most ${RECOVER_WINDOW_DAYS} days back) until (default now).`,
  object({ since: instant('since'), until: instant('until') }, ['since']),
);

export const deliveryParams = object({ id, delivery_id: id }, ['id', 'delivery_id']);
export const recoveryParams = object({ id, recovery_id: id }, ['id', 'recovery_id']);
/** A delivery's states, as the log shows and filters them. */
export const DELIVERY_STATUS_FILTER = ['pending', 'succeeded', 'failed', 'skipped'] as const;
export const deliveriesQuery = listQuerySchema(['created_at'], {
  status: enumOf(DELIVERY_STATUS_FILTER, 'Invalid status'),
  event_type: text(100, { 'x-message': 'Invalid event_type' }),
  event_id: text(100, { 'x-message': 'Invalid event_id' }),
});
export type DeliveriesQuery = Static<typeof deliveriesQuery>;

export type CreateWebhookBody = Static<typeof createWebhookBody>;
export type UpdateWebhookBody = Static<typeof updateWebhookBody>;
export type RotateSecretBody = Static<typeof rotateSecretBody>;
export type TestSendBody = Static<typeof testSendBody>;
export type RecoverBody = Static<typeof recoverBody>;

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

const attempt = named(
  'DeliveryAttempt',
  'One attempt of a delivery.',
  shape({
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

const webhookCreated = named(
  'WebhookCreated',
  'A created webhook, with its secret: shown only this once.',
  shape({ ...webhook, secret: string }),
);
/** When the secret was last rotated (null before any rotation), and the latest expiry of the secrets it replaced that still sign (null when none does). */
const rotation = { secret_rotated_at: nullableString, previous_secret_expires_at: nullableString };
const webhookListItem = named(
  'Webhook',
  'A webhook with its delivery counters and the state of its secret (never the secret itself).',
  shape({
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
const secretRotated = named(
  'WebhookSecretRotated',
  'The new secret, shown only this once; the secrets it replaced keep signing until previous_secret_expires_at.',
  shape({ id: string, secret: string, secret_rotated_at: string, previous_secret_expires_at: nullableString }),
);
const deliveryItem = named(
  'Delivery',
  'An event sent to a webhook, with its attempts.',
  shape({
    ...delivery,
    next_attempt_at: nullableString,
    attempts: arrayOf(attempt),
    created_at: string,
    updated_at: string,
  }),
);
const deliveryRetried = named('DeliveryRetried', 'A delivery sent again.', shape(delivery));
const testQueued = named(
  'WebhookTestQueued',
  "A test send's delivery, queued: its attempt shows in the delivery log.",
  shape(delivery),
);

export type WebhookCreated = Static<typeof webhookCreated>;
export type WebhookListItem = Static<typeof webhookListItem>;
export type DeliveryItem = Static<typeof deliveryItem>;
export type DeliveryRetried = Static<typeof deliveryRetried>;
export type WebhookTestQueued = Static<typeof testQueued>;
export type WebhookSecretRotated = Static<typeof secretRotated>;

const webhookDeleted = named('WebhookDeleted', 'A removed webhook.', shape({ id: string, deleted: bool }));
export type WebhookDeleted = Static<typeof webhookDeleted>;

const eventType = named(
  'WebhookEventType',
  "An event the platform emits: when, an example delivery, and the JSON Schema of a delivery's body (its data.object refers to the resource's schema in /v1/openapi.json).",
  shape({ type: string, description: string, example: freeObject, schema: freeObject }),
);
export type WebhookEventType = Static<typeof eventType>;

const recoveryStarted = { id: string, status: string, queued: integer, total: integer };
const recoveryQueued = named(
  'WebhookRecoveryStarted',
  'A recovery under way (running) or done at once (completed, nothing to send): queued of total deliveries re-queued so far.',
  shape(recoveryStarted),
);
const recovery = named(
  'WebhookRecovery',
  "A recovery's progress: queued of total deliveries re-queued, oldest first; completed once all are.",
  shape({
    ...recoveryStarted,
    webhook_id: string,
    since: string,
    until: string,
    created_at: string,
    finished_at: nullableString,
  }),
);
export type WebhookRecoveryStarted = Static<typeof recoveryQueued>;
export type WebhookRecovery = Static<typeof recovery>;

export const responses = {
  created: okResponse(201, webhookCreated),
  updated: okResponse(
    200,
    named('WebhookChanges', 'id, the fields sent and updated_at.', shape(webhook), { partial: true }),
  ),
  deleted: okResponse(200, webhookDeleted),
  list: okResponse(200, arrayOf(webhookListItem)),
  one: okResponse(200, webhookListItem),
  rotated: okResponse(200, secretRotated),
  deliveries: pageResponse(deliveryItem),
  retried: okResponse(200, deliveryRetried),
  testQueued: okResponse(202, testQueued),
  recovering: okResponse(202, recoveryQueued),
  recovery: okResponse(200, recovery),
  eventTypes: okResponse(200, arrayOf(eventType)),
};
