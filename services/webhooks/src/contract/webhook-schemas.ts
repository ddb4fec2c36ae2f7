import { listQuerySchema } from '@lpm/shared/http/pagination';
import { arrayOf, boolean, named, nullable, object, okResponse, out, pageResponse, shape, text, typed, type Static } from '@lpm/shared/http/schemas';

const { string, nullableString, integer, nullableInteger, number, boolean: bool, strings } = out;

// No C0 control or DEL (the URL parser drops tab, CR and LF silently); the guard checks the rest.
const url = text(2048, { pattern: '^[^\\u0000-\\u001f\\u007f]*$', 'x-message': 'Invalid URL' });
const eventName = text(100, { 'x-message': 'Invalid events' });
// Which names are events is checked in the domain (400 Invalid events).
const events = arrayOf(eventName, { maxItems: 50, 'x-message': 'Invalid events' });
const description = nullable(text());
const id = typed<string>({ type: 'string', maxLength: 100 });

export const createWebhookBody = named('CreateWebhookRequest', 'An HTTPS URL and the events it receives ("*" for all).', object({ url, events, description }, ['url', 'events']));
export const updateWebhookBody = named('UpdateWebhookRequest', 'Any subset of the webhook fields; active true re-activates it.', object({ url, events, description, active: boolean() }));

export const webhookIdParams = object({ id }, ['id']);
export const deliveryParams = object({ id, delivery_id: id }, ['id', 'delivery_id']);
export const deliveriesQuery = listQuerySchema(['created_at']);

export type CreateWebhookBody = Static<typeof createWebhookBody>;
export type UpdateWebhookBody = Static<typeof updateWebhookBody>;

const webhook = {
  id: string,
  url: string,
  events: strings,
  description: nullableString,
  active: bool,
  created_at: string,
  updated_at: string,
};

const attempt = named('DeliveryAttempt', 'One attempt of a delivery.', shape({
  attempt: integer,
  at: string,
  success: bool,
  status_code: nullableInteger,
  latency_ms: integer,
  error_class: nullableString,
  response_body: nullableString,
}));

const delivery = {
  id: string,
  event_id: string,
  event_type: string,
  status: string,
  attempts_count: integer,
};

const webhookCreated = named('WebhookCreated', 'A created webhook, with its secret: shown only this once.', shape({ ...webhook, secret: string }));
const webhookListItem = named('Webhook', 'A webhook with its delivery counters.', shape({ ...webhook, last_triggered_at: nullableString, success_rate: number, total_deliveries: integer, failed_deliveries: integer }));
const deliveryItem = named('Delivery', 'An event sent to a webhook, with its attempts.', shape({ ...delivery, next_attempt_at: nullableString, attempts: arrayOf(attempt), created_at: string, updated_at: string }));
const deliveryRetried = named('DeliveryRetried', 'A delivery sent again.', shape(delivery));

export type WebhookCreated = Static<typeof webhookCreated>;
export type WebhookListItem = Static<typeof webhookListItem>;
export type DeliveryItem = Static<typeof deliveryItem>;
export type DeliveryRetried = Static<typeof deliveryRetried>;

const webhookDeleted = named('WebhookDeleted', 'A removed webhook.', shape({ id: string, deleted: bool }));
export type WebhookDeleted = Static<typeof webhookDeleted>;

export const responses = {
  created: okResponse(201, webhookCreated),
  updated: okResponse(200, named('WebhookChanges', 'id, the fields sent and updated_at.', shape(webhook), { partial: true })),
  deleted: okResponse(200, webhookDeleted),
  list: okResponse(200, arrayOf(webhookListItem)),
  deliveries: pageResponse(deliveryItem),
  retried: okResponse(200, deliveryRetried),
};
