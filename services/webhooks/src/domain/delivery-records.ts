// The documents a delivery leaves in the store: the delivery itself, pending its
// first attempt, and the record of each attempt. Both ids are derived (from the
// webhook and the event, and from the delivery and the attempt's number), so a copy
// of an event or of an attempt job finds what an earlier copy stored.
import type { DomainEvent, EventType } from '@lpm/shared/events';
import { derivedId, newId } from '@lpm/shared/ids';
import { eventExample } from '@lpm/shared/webhook-catalog';
import type { AttemptRecord, DeliveryRecord } from '../data/webhook-entity.ts';
import type { SendResult } from '../upstream/webhook-sender.ts';
import { payloadBody } from './payload.ts';

export const attemptId = (deliveryId: string, attempt: number) => `${deliveryId}:${attempt}`;

/**
 * A delivery of `event` to a webhook, pending its first attempt: its id derived
 * from the two, and the body fixed here for every attempt.
 */
export function newDelivery(event: DomainEvent, webhookId: string, now: Date): DeliveryRecord {
  return {
    // Its time part is the event's created_at (delivery-metrics.ts reads it back).
    _id: derivedId('dlv', Date.parse(event.created_at) || 0, `${webhookId}:${event.id}`),
    team_id: event.team_id,
    webhook_id: webhookId,
    event_id: event.id,
    event_type: event.type,
    body: payloadBody(event, webhookId),
    status: 'pending',
    attempts_count: 0,
    last_attempt_at: null,
    next_attempt_at: now,
    created_at: now,
    updated_at: now,
  };
}

/**
 * A test send of `type` to a webhook, pending its one attempt: the catalog's example
 * with a fresh event id, the team's and webhook's ids, and `"test": true`.
 */
export function newTestDelivery(type: EventType, teamId: string, webhookId: string, now: Date): DeliveryRecord {
  const { data } = eventExample(type) as Pick<DomainEvent, 'data'>;
  const event = {
    id: newId('evt'),
    type,
    api_version: 'v1' as const,
    created_at: now.toISOString(),
    team_id: teamId,
    data,
  };
  const body = JSON.stringify({ ...JSON.parse(payloadBody(event, webhookId)), test: true });
  return { ...newDelivery({ ...event, actor_id: null }, webhookId, now), body, test: true };
}

/** The record of attempt number `attempt` of a delivery, made now with the sender's result. */
export function attemptRecord(delivery: DeliveryRecord, attempt: number, sent: SendResult): AttemptRecord {
  return {
    _id: attemptId(delivery._id, attempt),
    team_id: delivery.team_id,
    webhook_id: delivery.webhook_id,
    delivery_id: delivery._id,
    attempt,
    at: new Date(),
    ok: sent.ok,
    status_code: sent.statusCode,
    latency_ms: Math.round(sent.latencyMs),
    error_class: sent.errorClass,
    response_body: sent.responseBody,
    ...(delivery.test && { test: true }),
    ...(sent.retryAfterMs !== null && { retry_after_ms: sent.retryAfterMs }),
  };
}
