// The documents a delivery leaves in the store: the delivery itself, pending its
// first attempt, and the record of each attempt. Both ids are derived (from the
// webhook and the event, and from the delivery and the attempt's number), so a copy
// of an event or of an attempt job finds what an earlier copy stored.
import type { DomainEvent } from '@lpm/shared/events';
import { derivedId } from '@lpm/shared/ids';
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
  };
}
