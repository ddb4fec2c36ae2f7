// The service's collections, each under one name and typed by its records, and the
// base of the classes that read and write them.
import type { Db } from 'mongodb';
import {
  ATTEMPT_CLAIMS,
  ATTEMPT_TALLIES,
  ATTEMPTS,
  DELIVERIES,
  type AttemptClaimRecord,
  type AttemptRecord,
  type AttemptTallyRecord,
  type DeliveryLogHourRecord,
  type DeliveryRecord,
  type WebhookCountersRecord,
  type WebhookRecord,
  type WebhookRecoveryRecord,
  type WebhookTombstoneRecord,
} from './webhook-entity.ts';

/** That a conversion of stored data ran (CountersMigration). */
export interface MigrationRecord {
  _id: string;
  done_at: Date;
}

export function webhookCollections(db: Db) {
  return {
    webhooks: db.collection<WebhookRecord>('webhooks'),
    counters: db.collection<WebhookCountersRecord>('webhook_counters'),
    logHours: db.collection<DeliveryLogHourRecord>('delivery_log_hours'),
    deliveries: db.collection<DeliveryRecord>(DELIVERIES),
    attempts: db.collection<AttemptRecord>(ATTEMPTS),
    tallies: db.collection<AttemptTallyRecord>(ATTEMPT_TALLIES),
    claims: db.collection<AttemptClaimRecord>(ATTEMPT_CLAIMS),
    recoveries: db.collection<WebhookRecoveryRecord>('webhook_recoveries'),
    tombstones: db.collection<WebhookTombstoneRecord>('webhook_tombstones'),
    migrations: db.collection<MigrationRecord>('webhook_migrations'),
  };
}

export type WebhookCollections = ReturnType<typeof webhookCollections>;

/** A reader and writer of the service's collections. */
export abstract class WebhookData {
  protected readonly db: Db;
  protected readonly collections: WebhookCollections;

  constructor(db: Db) {
    this.db = db;
    this.collections = webhookCollections(db);
  }
}
