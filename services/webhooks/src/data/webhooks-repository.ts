// Webhook subscriptions in the store. Writes that must not interleave hold a
// document lock (store/lock.ts): a team's lock while its limit is checked and a
// webhook inserted, a webhook's lock for updates and automatic deactivation.
import type { Db } from 'mongodb';
import { isId } from '@lpm/shared/ids';
import { isDuplicateKey } from '@lpm/shared/store/duplicate-key';
import { withDocumentLock } from '@lpm/shared/store/lock';
import { urlAlreadyRegistered, webhookLimitReached, webhookNotFound } from '../domain/webhook-errors.ts';
import type { WebhookRecord } from './webhook-entity.ts';

export class WebhooksRepository {
  private readonly db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  private get webhooks() {
    return this.db.collection<WebhookRecord>('webhooks');
  }

  /** The team's webhook, or 404 `Webhook not found`. */
  async get(teamId: string, id: string): Promise<WebhookRecord> {
    if (!isId('wh', id)) throw webhookNotFound();
    const found = await this.webhooks.findOne({ _id: id, team_id: teamId });
    if (!found) throw webhookNotFound();
    return found;
  }

  byId(id: string): Promise<WebhookRecord | null> {
    return this.webhooks.findOne({ _id: id });
  }

  async urlTaken(teamId: string, urlKey: string, exceptId: string): Promise<boolean> {
    return (await this.webhooks.findOne({ team_id: teamId, url_key: urlKey, _id: { $ne: exceptId } }, { projection: { _id: 1 } })) !== null;
  }

  count(teamId: string): Promise<number> {
    return this.webhooks.countDocuments({ team_id: teamId });
  }

  /** Inserts the webhook under its team's lock unless the team has `limit` already (422) or the URL is taken (409). */
  async insertWithin(record: WebhookRecord, limit: number): Promise<void> {
    await withDocumentLock(this.db, 'webhook_teams', record.team_id, async () => {
      if ((await this.count(record.team_id)) >= limit) throw webhookLimitReached(limit);
      try {
        await this.webhooks.insertOne(record);
      } catch (e) {
        throw isDuplicateKey(e) ? urlAlreadyRegistered() : e;
      }
    });
  }

  listForTeam(teamId: string): Promise<WebhookRecord[]> {
    return this.webhooks.find({ team_id: teamId }).sort({ created_at: 1, _id: 1 }).toArray();
  }

  /** Sets what `change` returns for the fresh record, under the lock automatic deactivation takes. */
  async update(teamId: string, id: string, change: (fresh: WebhookRecord) => Partial<WebhookRecord>): Promise<void> {
    await withDocumentLock(this.db, 'webhooks', id, async () => {
      const set = change(await this.get(teamId, id));
      try {
        await this.webhooks.updateOne({ _id: id, team_id: teamId }, { $set: set });
      } catch (e) {
        throw isDuplicateKey(e) ? urlAlreadyRegistered() : e;
      }
    });
  }

  async remove(teamId: string, id: string): Promise<void> {
    await this.webhooks.deleteOne({ _id: id, team_id: teamId });
  }

  /** Ids of the team's active webhooks subscribed to `type` (or to every event, `all`). */
  async subscribed(teamId: string, type: string, all: string): Promise<string[]> {
    const rows = await this.webhooks.find({ team_id: teamId, active: true, events: { $in: [type, all] } }, { projection: { _id: 1 } }).toArray();
    return rows.map((r) => r._id);
  }

  /** Makes the webhook inactive and owing an alert, unless it was re-activated or deactivated meanwhile; true when this call did it. */
  async deactivate(webhook: Pick<WebhookRecord, '_id' | 'active_since'>): Promise<boolean> {
    return withDocumentLock(this.db, 'webhooks', webhook._id, async () => {
      const res = await this.webhooks.updateOne(
        { _id: webhook._id, active: true, active_since: webhook.active_since },
        { $set: { active: false, alert_pending: true, updated_at: new Date() } },
      );
      return res.modifiedCount === 1;
    });
  }

  owingAlert(id: string): Promise<WebhookRecord | null> {
    return this.webhooks.findOne({ _id: id, alert_pending: true });
  }

  async alertSent(id: string): Promise<void> {
    await this.webhooks.updateOne({ _id: id }, { $set: { alert_pending: false } });
  }

  async owingAlerts(limit: number): Promise<string[]> {
    return (await this.webhooks.find({ alert_pending: true }, { projection: { _id: 1 } }).limit(limit).toArray()).map((r) => r._id);
  }
}
