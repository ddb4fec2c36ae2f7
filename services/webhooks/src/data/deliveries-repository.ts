// Deliveries (one event for one webhook, its body fixed once) and their attempts.
// An attempt's id is `<delivery>:<n>`, so each attempt is recorded once however
// often its job runs.
import type { Db } from 'mongodb';
import { pageWindow, parseSort, type ListQuery } from '@lpm/shared/http/pagination';
import { insertOrGet } from '@lpm/shared/store/duplicate-key';
import type { AttemptRecord, DeliveryRecord, DeliveryStatus } from './webhook-entity.ts';

export interface Outcome {
  status: DeliveryStatus;
  attempts_count: number;
  last_attempt_at: Date;
  next_attempt_at: Date | null;
}

export interface AttemptStats {
  total: number;
  failed: number;
  last: Date | null;
}

export class DeliveriesRepository {
  private readonly db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  private get deliveries() {
    return this.db.collection<DeliveryRecord>('deliveries');
  }

  private get attempts() {
    return this.db.collection<AttemptRecord>('attempts');
  }

  /** Stores the delivery, or gives back the one already stored for its webhook and event. */
  insertOrGet(delivery: DeliveryRecord): Promise<DeliveryRecord> {
    return insertOrGet(this.deliveries, delivery, { webhook_id: delivery.webhook_id, event_id: delivery.event_id });
  }

  get(id: string): Promise<DeliveryRecord | null> {
    return this.deliveries.findOne({ _id: id });
  }

  findForWebhook(teamId: string, webhookId: string, id: string): Promise<DeliveryRecord | null> {
    return this.deliveries.findOne({ _id: id, webhook_id: webhookId, team_id: teamId });
  }

  /** One page of a webhook's deliveries (without their bodies), newest first by default. */
  async page(teamId: string, webhookId: string, q: ListQuery): Promise<{ records: DeliveryRecord[]; total: number }> {
    const { skip, limit } = pageWindow(q);
    const { direction } = parseSort(q.sort, '-created_at');
    const filter = { webhook_id: webhookId, team_id: teamId };
    const [records, total] = await Promise.all([
      this.deliveries.find<DeliveryRecord>(filter, { projection: { body: 0 } }).sort({ created_at: direction, _id: direction }).skip(skip).limit(limit).toArray(),
      this.deliveries.countDocuments(filter),
    ]);
    return { records, total };
  }

  async markPending(id: string, now: Date): Promise<void> {
    await this.deliveries.updateOne({ _id: id }, { $set: { status: 'pending', next_attempt_at: now, updated_at: now } });
  }

  async skip(id: string): Promise<void> {
    await this.deliveries.updateOne({ _id: id, status: 'pending' }, { $set: { status: 'skipped', next_attempt_at: null, updated_at: new Date() } });
  }

  async recordOutcome(id: string, o: Outcome): Promise<void> {
    await this.deliveries.updateOne({ _id: id }, { $set: { ...o, updated_at: o.last_attempt_at } });
  }

  /** Pending deliveries whose next attempt was due before `before`. */
  stuck(before: Date, limit: number): Promise<DeliveryRecord[]> {
    return this.deliveries.find({ status: 'pending', next_attempt_at: { $lt: before } }).limit(limit).toArray();
  }

  /** Moves a stuck delivery's next attempt to `now`, unless an attempt was recorded meanwhile. */
  async requeued(d: DeliveryRecord, now: Date): Promise<void> {
    await this.deliveries.updateOne({ _id: d._id, attempts_count: d.attempts_count }, { $set: { next_attempt_at: now } });
  }

  /** Stores an attempt, or gives back the one recorded before (a crash or a duplicate job). */
  recordAttempt(attempt: AttemptRecord): Promise<AttemptRecord> {
    return insertOrGet(this.attempts, attempt, { _id: attempt._id });
  }

  attemptsOf(deliveryIds: string[]): Promise<AttemptRecord[]> {
    if (deliveryIds.length === 0) return Promise.resolve([]);
    return this.attempts.find({ delivery_id: { $in: deliveryIds } }).sort({ attempt: 1 }).toArray();
  }

  /** Whether each of the webhook's last `n` attempts since `since` succeeded, newest first. */
  async recentOutcomes(webhookId: string, since: Date, n: number): Promise<boolean[]> {
    const rows = await this.attempts.find({ webhook_id: webhookId, at: { $gte: since } }, { projection: { ok: 1 } }).sort({ at: -1 }).limit(n).toArray();
    return rows.map((a) => a.ok);
  }

  async stats(webhookId: string): Promise<AttemptStats> {
    const [total, failed, last] = await Promise.all([
      this.attempts.countDocuments({ webhook_id: webhookId }),
      this.attempts.countDocuments({ webhook_id: webhookId, ok: false }),
      this.attempts.find({ webhook_id: webhookId }, { projection: { at: 1 } }).sort({ at: -1 }).limit(1).next(),
    ]);
    return { total, failed, last: last?.at ?? null };
  }
}
