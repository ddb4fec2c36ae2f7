import { listQuerySchema } from '@lpm/shared/http/pagination';
import { nullable, object, okResponse, out, pageResponse, shape, text } from '@lpm/shared/http/schemas';

const { string, nullableString, integer, strings } = out;
const boolean = { type: 'boolean' };
const number = { type: 'number' };

const url = { type: 'string', maxLength: 2048, 'x-message': 'Invalid URL' };
const eventName = { type: 'string', maxLength: 100, 'x-message': 'Invalid events' };
const events = { type: 'array', maxItems: 50, items: eventName, 'x-message': 'Invalid events' };
const description = nullable(text());

export const createWebhookBody = object({ url, events, description }, ['url', 'events']);
export const updateWebhookBody = object({ url, events, description, active: boolean });

export const webhookIdParams = object({ id: { type: 'string', maxLength: 100 } }, ['id']);
export const deliveryParams = object({ id: { type: 'string', maxLength: 100 }, delivery_id: { type: 'string', maxLength: 100 } }, ['id', 'delivery_id']);
export const deliveriesQuery = listQuerySchema(['created_at']);

const webhook = {
  id: string,
  url: string,
  events: strings,
  description: nullableString,
  active: boolean,
  created_at: string,
  updated_at: string,
};

const attempt = shape({
  attempt: integer,
  at: string,
  success: boolean,
  status_code: { type: ['integer', 'null'] },
  latency_ms: integer,
  error_class: nullableString,
  response_body: nullableString,
});

const delivery = {
  id: string,
  event_id: string,
  event_type: string,
  status: string,
  attempts_count: integer,
};

export const responses = {
  created: okResponse(201, shape({ ...webhook, secret: string })),
  /** id, the fields sent and updated_at. */
  updated: okResponse(200, shape(webhook)),
  deleted: okResponse(200, shape({ id: string, deleted: boolean })),
  list: okResponse(200, {
    type: 'array',
    items: shape({ ...webhook, last_triggered_at: nullableString, success_rate: number, total_deliveries: integer, failed_deliveries: integer }),
  }),
  deliveries: pageResponse(shape({ ...delivery, next_attempt_at: nullableString, attempts: { type: 'array', items: attempt }, created_at: string, updated_at: string })),
  retried: okResponse(200, shape(delivery)),
};
