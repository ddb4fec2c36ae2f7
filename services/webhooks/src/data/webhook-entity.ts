import { defineEntity, p, type InferEntity } from '@mikro-orm/mongodb';

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'skipped'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const WebhookEntity = defineEntity({
  name: 'Webhook',
  collection: 'webhooks',
  properties: {
    _id: p.string().primary(),
    team_id: p.string(),
    url: p.string(),
    // The URL as compared for "already registered" (normalized by the URL parser).
    url_key: p.string(),
    description: p.string().strictNullable(),
    events: p.json<string[]>(),
    active: p.boolean(),
    secret_sealed: p.string(),
    // Consecutive failures count attempts after this instant (creation or re-activation).
    active_since: p.datetime(),
    // Set when automatic deactivation still owes the owner an alert e-mail.
    alert_pending: p.boolean(),
    created_at: p.datetime(),
    updated_at: p.datetime(),
  },
  indexes: [{ properties: ['team_id', 'active'] }, { properties: ['alert_pending'] }],
  uniques: [{ properties: ['team_id', 'url_key'] }],
});

export type WebhookRecord = InferEntity<typeof WebhookEntity>;

/** One event for one webhook: the body sent on every attempt, byte for byte. */
export const DeliveryEntity = defineEntity({
  name: 'Delivery',
  collection: 'deliveries',
  properties: {
    _id: p.string().primary(),
    team_id: p.string(),
    webhook_id: p.string(),
    event_id: p.string(),
    event_type: p.string(),
    body: p.string(),
    status: p.enum(DELIVERY_STATUSES),
    attempts_count: p.integer(),
    last_attempt_at: p.datetime().strictNullable(),
    next_attempt_at: p.datetime().strictNullable(),
    created_at: p.datetime(),
    updated_at: p.datetime(),
  },
  indexes: [{ properties: ['webhook_id', 'created_at'] }],
  uniques: [{ properties: ['webhook_id', 'event_id'] }],
});

export type DeliveryRecord = InferEntity<typeof DeliveryEntity>;

/** Every attempt, as the delivery log shows it; `_id` is `<delivery id>:<attempt>`, so an attempt is recorded once. */
export const AttemptEntity = defineEntity({
  name: 'Attempt',
  collection: 'attempts',
  properties: {
    _id: p.string().primary(),
    team_id: p.string(),
    webhook_id: p.string(),
    delivery_id: p.string(),
    attempt: p.integer(),
    at: p.datetime(),
    ok: p.boolean(),
    status_code: p.integer().strictNullable(),
    latency_ms: p.integer(),
    error_class: p.string().strictNullable(),
    response_body: p.string().strictNullable(),
  },
  indexes: [{ properties: ['webhook_id', 'at'] }, { properties: ['webhook_id', 'ok'] }, { properties: ['delivery_id'] }],
});

export type AttemptRecord = InferEntity<typeof AttemptEntity>;

/**
 * One time slot of a claimed attempt (DeliveriesRepository.claimAttempt): `_id` is
 * `<delivery id>:<attempt>:<slot>`; the slot's end is `expires_at`.
 */
export const AttemptClaimEntity = defineEntity({
  name: 'AttemptClaim',
  collection: 'attempt_claims',
  properties: {
    _id: p.string().primary(),
    expires_at: p.datetime(),
  },
  indexes: [{ properties: ['expires_at'] }],
});

export type AttemptClaimRecord = InferEntity<typeof AttemptClaimEntity>;

export const WEBHOOK_ENTITIES = [WebhookEntity, DeliveryEntity, AttemptEntity, AttemptClaimEntity];
