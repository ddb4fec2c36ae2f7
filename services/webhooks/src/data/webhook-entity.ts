import { p, type InferEntity } from '@mikro-orm/mongodb';
import { timestampProperties } from '@lpm/shared/store/entity-properties';
import { idEntity, teamEntity } from '@lpm/shared/store/entities';
import type { RetiredIndex } from '@lpm/shared/store/orm';

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'skipped'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** Six failed attempts in a row, or a 410 Gone. */
export const DEACTIVATION_REASONS = ['failures', 'gone'] as const;
export type DeactivationReason = (typeof DEACTIVATION_REASONS)[number];

export const WebhookEntity = teamEntity('Webhook', 'webhooks', {
  properties: {
    url: p.string(),
    // The URL as compared for "already registered" (normalized by the URL parser).
    url_key: p.string(),
    description: p.string().strictNullable(),
    events: p.json<string[]>(),
    active: p.boolean(),
    secret_sealed: p.string(),
    // When the secret was last rotated, and the secrets it replaced that still sign beside it until
    // their expiry: each sealed like the current one, the most recently retired first (secret-rotation.ts).
    secret_rotated_at: p.datetime().nullable(),
    previous_secrets: p.json<PreviousSecret[]>().nullable(),
    // Consecutive failures count attempts after this instant (creation or re-activation).
    active_since: p.datetime(),
    // Set when automatic deactivation still owes the owner an alert e-mail, and why it was deactivated.
    alert_pending: p.boolean(),
    deactivated_reason: p.enum(DEACTIVATION_REASONS).nullable(),
    // Deliveries per second at most, across replicas (data/rate-reservations.ts); null: no limit.
    rate_limit: p.integer().nullable(),
    // Counters an earlier version kept on the webhook, and the attempts its last count added: where a
    // webhook has no `webhook_counters` document yet, its counters start from these (CountersMigration).
    total_deliveries: p.integer().nullable(),
    failed_deliveries: p.integer().nullable(),
    last_triggered_at: p.datetime().nullable(),
    last_counted: p.json<string[]>().nullable(),
    ...timestampProperties,
  },
  indexes: [{ properties: ['team_id', 'active'] }, { properties: ['alert_pending'] }],
  uniques: [{ properties: ['team_id', 'url_key'] }],
});

/** A secret replaced by a rotation: it signs beside the current one until `expires_at`. */
export interface PreviousSecret {
  sealed: string;
  expires_at: Date;
}

/** Fields added after records were first stored: absent on older ones. */
type Later<T, K extends keyof T> = Omit<T, K> & Partial<Pick<T, K>>;

export type WebhookRecord = Later<
  InferEntity<typeof WebhookEntity>,
  | 'total_deliveries'
  | 'failed_deliveries'
  | 'last_triggered_at'
  | 'last_counted'
  | 'secret_rotated_at'
  | 'previous_secrets'
  | 'deactivated_reason'
  | 'rate_limit'
>;

/** A webhook's counters over its delivery attempts, written only by the fold (CountersRepository); `_id` is the webhook's id. */
export const WebhookCountersEntity = teamEntity('WebhookCounters', 'webhook_counters', {
  properties: {
    total_deliveries: p.integer(),
    failed_deliveries: p.integer(),
    last_triggered_at: p.datetime().strictNullable(),
    // The newest successful attempt the folds added, and the times of the failed ones after it (the newest
    // RUN_KEPT, oldest first): the one record of a webhook's failures in a row (test sends left out).
    last_success_at: p.datetime().nullable(),
    failed_since_success: p.json<Date[]>().nullable(),
    // The attempts the last fold added, whose `counted` marks a crash may have left unset.
    last_counted: p.json<string[]>(),
    // The delivery log's counts per minute not yet moved to `delivery_log_hours` (JSON, delivery-log-counts.ts),
    // the revision a move is named by, and whether deliveries stored before the markers are counted too.
    log_minutes: p.string().nullable(),
    log_rev: p.integer().nullable(),
    log_ready: p.boolean().nullable(),
    // Attempts of test sends, counted apart from the others.
    test_deliveries: p.integer().nullable(),
    test_failed_deliveries: p.integer().nullable(),
  },
  indexes: [{ properties: ['team_id'] }],
});

export type WebhookCountersRecord = Later<
  InferEntity<typeof WebhookCountersEntity>,
  | 'last_success_at'
  | 'failed_since_success'
  | 'log_minutes'
  | 'log_rev'
  | 'log_ready'
  | 'test_deliveries'
  | 'test_failed_deliveries'
>;

/** A webhook's delivery log counts of one hour (delivery-log-counts.ts); `_id` is `<webhook>:<hour>`. */
export const DeliveryLogHourEntity = idEntity('DeliveryLogHour', 'delivery_log_hours', {
  properties: {
    webhook_id: p.string(),
    hour: p.integer(),
    // [[minute, deliveries], ...] as JSON.
    minutes: p.string(),
    // The names of the last moves merged into it.
    merged: p.json<string[]>(),
  },
  indexes: [{ properties: ['webhook_id'] }, { properties: ['hour'] }],
});

export type DeliveryLogHourRecord = InferEntity<typeof DeliveryLogHourEntity>;

/** The collection of deliveries (data/deliveries-repository.ts). */
export const DELIVERIES = 'deliveries';

/** One event for one webhook: the body sent on every attempt, byte for byte. */
export const DeliveryEntity = teamEntity('Delivery', DELIVERIES, {
  properties: {
    webhook_id: p.string(),
    event_id: p.string(),
    event_type: p.string(),
    body: p.string(),
    status: p.enum(DELIVERY_STATUSES),
    attempts_count: p.integer(),
    last_attempt_at: p.datetime().strictNullable(),
    next_attempt_at: p.datetime().strictNullable(),
    ...timestampProperties,
    // Equality markers for the periodic queries (@lpm/shared/store/markers), set by the repository with the
    // instants they bucket: the day of updated_at (retention) and the minute of next_attempt_at
    // (the rescue of lost attempts; null when none is due). Absent on deliveries stored before them.
    updated_day: p.integer().nullable(),
    due_minute: p.integer().nullable(),
    // The delivery log's markers: `<webhook>:<minute>` and `<webhook>:<hour>` of created_at (delivery-log-counts.ts),
    // and whether the log's backfill (CountersMigration) counted the delivery (one stored before the markers).
    log_minute: p.string().nullable(),
    log_hour: p.string().nullable(),
    log_backfilled: p.boolean().nullable(),
    // The first attempt, when it succeeded as the fan-out made it: stored with the delivery in one insert
    // rather than in `attempts` (a delivery that needs no retry is one document).
    first_attempt: p.json<FirstAttempt>().nullable(),
    // A test send (POST /v1/webhooks/{id}/test): one attempt, counted apart, never deactivating the webhook.
    test: p.boolean().nullable(),
    // The last recovery that re-queued it (its count survives the recovery's crash).
    recovery_id: p.string().nullable(),
  },
  indexes: [
    { properties: ['webhook_id', 'created_at'] },
    { properties: ['updated_day'] },
    { properties: ['due_minute'] },
    { properties: ['log_minute', 'created_at'] },
    { properties: ['log_hour'] },
  ],
  uniques: [{ properties: ['webhook_id', 'event_id'] }],
});

export type DeliveryRecord = Later<
  InferEntity<typeof DeliveryEntity>,
  'updated_day' | 'due_minute' | 'log_minute' | 'log_hour' | 'log_backfilled' | 'first_attempt' | 'test' | 'recovery_id'
>;

/** An attempt kept inside its delivery: what its record holds beyond the ids its delivery gives. */
export type FirstAttempt = Omit<
  AttemptRecord,
  '_id' | 'team_id' | 'webhook_id' | 'delivery_id' | 'attempt' | 'counted' | 'day' | 'test' | 'retry_after_ms'
>;

/** The collection of attempts (data/attempts-repository.ts). */
export const ATTEMPTS = 'attempts';

/** Every attempt, as the delivery log shows it; `_id` is `<delivery id>:<attempt>`, so an attempt is recorded once. */
export const AttemptEntity = teamEntity('Attempt', ATTEMPTS, {
  properties: {
    webhook_id: p.string(),
    delivery_id: p.string(),
    attempt: p.integer(),
    at: p.datetime(),
    ok: p.boolean(),
    status_code: p.integer().strictNullable(),
    latency_ms: p.integer(),
    error_class: p.string().strictNullable(),
    response_body: p.string().strictNullable(),
    // false where an earlier version stored it before counting it (CountersMigration counts those once).
    counted: p.boolean().nullable(),
    // The day of `at`, retention's equality marker (absent on attempts stored before it).
    day: p.integer().nullable(),
    // An attempt of a test send: left out of the count of failures in a row.
    test: p.boolean().nullable(),
    // A 429's or 503's Retry-After, in ms from the attempt: the next attempt waits at least this long.
    retry_after_ms: p.integer().nullable(),
  },
  indexes: [
    { properties: ['webhook_id', 'at'] },
    { properties: ['webhook_id', 'ok'] },
    { properties: ['delivery_id'] },
    // `counted` first: the local store makes its GIN index on the first field, and the fold's
    // filter names `counted` by equality.
    { properties: ['counted', 'webhook_id'] },
    { properties: ['day'] },
  ],
});

export type AttemptRecord = Later<InferEntity<typeof AttemptEntity>, 'counted' | 'day' | 'test' | 'retry_after_ms'>;

/** The collection of attempt tallies (data/attempts-repository.ts; folded by data/counters-repository.ts). */
export const ATTEMPT_TALLIES = 'attempt_tallies';

/**
 * An attempt not yet in its webhook's counters: stored before the attempt itself,
 * with the same `_id`, and deleted by the fold that adds it (CountersRepository).
 */
export const AttemptTallyEntity = idEntity('AttemptTally', ATTEMPT_TALLIES, {
  properties: {
    webhook_id: p.string(),
    ok: p.boolean(),
    at: p.datetime(),
    // The created_at of its delivery when this counts the delivery in the log (its first attempt, or its skip).
    logged: p.datetime().nullable(),
    // A delivery skipped before any attempt: counted in the log, not an attempt.
    skipped: p.boolean().nullable(),
    // An attempt of a test send: added to the test counters.
    test: p.boolean().nullable(),
  },
  indexes: [{ properties: ['webhook_id'] }],
});

export type AttemptTallyRecord = Later<InferEntity<typeof AttemptTallyEntity>, 'logged' | 'skipped' | 'test'>;

/** The collection of attempt claims (data/attempt-claims-repository.ts). */
export const ATTEMPT_CLAIMS = 'attempt_claims';

/**
 * One time slot of a claimed attempt (AttemptClaimsRepository.claimAttempt): `_id` is
 * `<delivery id>:<attempt>:<slot>`; the slot's end is `expires_at`, and `slot` its
 * number, the sweep's equality marker (absent on claims stored before it).
 */
export const AttemptClaimEntity = idEntity('AttemptClaim', ATTEMPT_CLAIMS, {
  properties: {
    // Who holds it: a claim is released by its holder's owner, both slots in one delete.
    owner: p.string().nullable(),
    expires_at: p.datetime(),
    slot: p.integer().nullable(),
  },
  indexes: [{ properties: ['expires_at'] }, { properties: ['slot'] }],
});

export type AttemptClaimRecord = Later<InferEntity<typeof AttemptClaimEntity>, 'slot' | 'owner'>;

export const RECOVERY_STATUSES = ['running', 'completed'] as const;

/**
 * POST /v1/webhooks/{id}/recover: the window, how many deliveries it re-queues
 * (`total`, counted at its start) and has (`queued`), and where it got to (the
 * created_at and id of the last one), so another process resumes it after a crash.
 */
export const WebhookRecoveryEntity = teamEntity('WebhookRecovery', 'webhook_recoveries', {
  properties: {
    webhook_id: p.string(),
    since: p.datetime(),
    until: p.datetime(),
    status: p.enum(RECOVERY_STATUSES),
    queued: p.integer(),
    total: p.integer(),
    cursor_at: p.datetime().strictNullable(),
    cursor_id: p.string().strictNullable(),
    ...timestampProperties,
    finished_at: p.datetime().strictNullable(),
  },
  indexes: [{ properties: ['status'] }, { properties: ['webhook_id', 'status'] }],
});

export type WebhookRecoveryRecord = InferEntity<typeof WebhookRecoveryEntity>;

/**
 * A deleted webhook, written before the webhook is deleted and kept a while after
 * its history is dropped: retention drops the history of each again by equality,
 * so a crash in between, or an attempt recorded as it was deleted, leaves nothing.
 */
export const WebhookTombstoneEntity = teamEntity('WebhookTombstone', 'webhook_tombstones', {
  properties: {
    deleted_at: p.datetime(),
  },
});

export type WebhookTombstoneRecord = InferEntity<typeof WebhookTombstoneEntity>;

export const WEBHOOK_ENTITIES = [
  WebhookEntity,
  WebhookCountersEntity,
  DeliveryLogHourEntity,
  DeliveryEntity,
  AttemptEntity,
  AttemptTallyEntity,
  AttemptClaimEntity,
  WebhookTombstoneEntity,
  WebhookRecoveryEntity,
];

/** Replaced by `counted_1_webhook_id_1`, which also serves the counting sweep's `{ counted: false }` (and gets a GIN index on the local store). */
export const RETIRED_WEBHOOK_INDEXES: RetiredIndex[] = [{ collection: ATTEMPTS, name: 'webhook_id_1_counted_1' }];
