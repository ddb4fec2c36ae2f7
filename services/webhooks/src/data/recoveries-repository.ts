// Recoveries (POST /v1/webhooks/{id}/recover) in the store, and the deliveries they
// re-queue: those of a webhook that failed for good or were skipped, in a window,
// oldest first, read a page at a time after the last one re-queued. One recovery
// of a webhook runs at a time, across processes: its runner holds the webhook's
// recovery lease (RunLease) while it works, and a holder that dies leaves the
// recovery `running` in the store, for the next maintenance run anywhere to resume.
import type { Filter } from 'mongodb';
import { RunLease } from '@lpm/shared/store/run-lease';
import { WebhookData } from './collections.ts';
import type { DeliveryRecord, DeliveryStatus, WebhookRecoveryRecord } from './webhook-entity.ts';

/** A held lease of a webhook's recoveries. */
export interface RecoveryLease {
  /** false when another process took it over (this one was too slow to renew it). */
  renew(): Promise<boolean>;
  release(): Promise<void>;
}

/** A dead holder's lease runs out within two of these. */
const LEASE_MS = 5000;

/** Where a recovery got to: the created_at and id of the last delivery it re-queued. */
export interface RecoveryCursor {
  at: Date;
  id: string;
}

export class RecoveriesRepository extends WebhookData {
  /** The webhook's recovery lease, or null while another process holds it. */
  lease(webhookId: string): Promise<RecoveryLease | null> {
    return RunLease.take(this.db, `webhook-recovery:${webhookId}`, LEASE_MS);
  }

  async insert(r: WebhookRecoveryRecord): Promise<void> {
    await this.collections.recoveries.insertOne(r);
  }

  get(teamId: string, webhookId: string, id: string): Promise<WebhookRecoveryRecord | null> {
    return this.collections.recoveries.findOne({ _id: id, webhook_id: webhookId, team_id: teamId });
  }

  async runningOf(webhookId: string): Promise<boolean> {
    return (
      (await this.collections.recoveries.findOne(
        { webhook_id: webhookId, status: 'running' },
        { projection: { _id: 1 } },
      )) !== null
    );
  }

  running(limit: number): Promise<WebhookRecoveryRecord[]> {
    return this.collections.recoveries.find({ status: 'running' }).limit(limit).toArray();
  }

  async progress(id: string, queued: number, cursor: RecoveryCursor): Promise<void> {
    await this.collections.recoveries.updateOne(
      { _id: id },
      { $set: { queued, cursor_at: cursor.at, cursor_id: cursor.id, updated_at: new Date() } },
    );
  }

  async finish(id: string, queued: number): Promise<void> {
    const now = new Date();
    await this.collections.recoveries.updateOne(
      { _id: id },
      { $set: { status: 'completed', queued, updated_at: now, finished_at: now } },
    );
  }

  /** How many deliveries a recovery of this window would re-queue, up to `limit`. */
  countRecoverable(webhookId: string, since: Date, until: Date, limit: number): Promise<number> {
    return this.collections.deliveries.countDocuments(recoverable(webhookId, since, until), { limit });
  }

  /** The deliveries this recovery re-queued so far (a resumed one counts those of the run that died). */
  countRequeued(recoveryId: string, webhookId: string): Promise<number> {
    return this.collections.deliveries.countDocuments({ webhook_id: webhookId, recovery_id: recoveryId });
  }

  /** The deliveries of the recovery's window it made pending and that wait for their attempt still, without their bodies. */
  pendingRequeued(r: WebhookRecoveryRecord): Promise<DeliveryRecord[]> {
    return this.collections.deliveries
      .find<DeliveryRecord>(
        {
          webhook_id: r.webhook_id,
          created_at: { $gte: r.since, $lt: r.until },
          recovery_id: r._id,
          status: 'pending',
        },
        { projection: { body: 0 } },
      )
      .toArray();
  }

  /** The next `limit` deliveries to re-queue after `after`, oldest first, without their bodies. */
  nextRecoverable(
    webhookId: string,
    since: Date,
    until: Date,
    after: RecoveryCursor | null,
    limit: number,
  ): Promise<DeliveryRecord[]> {
    const past: Filter<DeliveryRecord> = after
      ? { $or: [{ created_at: { $gt: after.at } }, { created_at: after.at, _id: { $gt: after.id } }] }
      : {};
    return this.collections.deliveries
      .find<DeliveryRecord>({ ...recoverable(webhookId, since, until), ...past }, { projection: { body: 0 } })
      .sort({ created_at: 1, _id: 1 })
      .limit(limit)
      .toArray();
  }
}

/** Deliveries that failed for good or were skipped while the webhook was inactive (test sends aside), made in [since, until). */
function recoverable(webhookId: string, since: Date, until: Date): Filter<DeliveryRecord> {
  return {
    webhook_id: webhookId,
    status: { $in: RECOVERABLE },
    created_at: { $gte: since, $lt: until },
    test: { $ne: true },
  };
}

const RECOVERABLE: DeliveryStatus[] = ['failed', 'skipped'];
