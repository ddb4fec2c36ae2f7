// After 6 failed attempts in a row (since creation or re-activation) a webhook is
// made inactive and its team's owner gets an alert e-mail (spec, Delivery rules).
// The e-mail is owed from the moment of deactivation (alert_pending), so one that
// fails is sent again by the maintenance sweep.
import type { Db } from 'mongodb';
import type { Mailer } from '@lpm/shared/mailer';
import { withDocumentLock } from '@lpm/shared/store/lock';
import type { DirectoryUser } from '@lpm/shared/upstream/user-directory';
import type { AttemptRecord, WebhookRecord } from '../data/webhook-entity.ts';

export const CONSECUTIVE_FAILURES_LIMIT = 6;

type Logger = { info: (o: object, m?: string) => void; error: (o: object, m?: string) => void };

export interface DeactivationOptions {
  db: Db;
  mailer: Mailer;
  owners: { owner(teamId: string): Promise<DirectoryUser | null> };
  logger: Logger;
}

export class Deactivation {
  private readonly opts: DeactivationOptions;

  constructor(opts: DeactivationOptions) {
    this.opts = opts;
  }

  private get webhooks() {
    return this.opts.db.collection<WebhookRecord>('webhooks');
  }

  /**
   * After a failed attempt: whether the webhook is now inactive, and whether this
   * call made it so (its caller then sends the alert, once its own writes are done).
   */
  async afterFailure(webhook: WebhookRecord): Promise<{ inactive: boolean; deactivatedNow: boolean }> {
    const recent = await this.opts.db
      .collection<AttemptRecord>('attempts')
      .find({ webhook_id: webhook._id, at: { $gte: webhook.active_since } }, { projection: { ok: 1 } })
      .sort({ at: -1 })
      .limit(CONSECUTIVE_FAILURES_LIMIT)
      .toArray();
    if (recent.length < CONSECUTIVE_FAILURES_LIMIT || recent.some((a) => a.ok)) return { inactive: false, deactivatedNow: false };
    const deactivatedNow = await withDocumentLock(this.opts.db, 'webhooks', webhook._id, async () => {
      const res = await this.webhooks.updateOne(
        { _id: webhook._id, active: true, active_since: webhook.active_since },
        { $set: { active: false, alert_pending: true, updated_at: new Date() } },
      );
      return res.modifiedCount === 1;
    });
    if (deactivatedNow) this.opts.logger.info({ webhook_id: webhook._id, team_id: webhook.team_id }, 'webhook deactivated after consecutive failures');
    return { inactive: true, deactivatedNow };
  }

  /** Sends the alert a deactivated webhook owes, once; failures are logged and retried by sendPendingAlerts. */
  async sendAlert(webhookId: string): Promise<void> {
    const webhook = await this.webhooks.findOne({ _id: webhookId, alert_pending: true });
    if (!webhook) return;
    try {
      const owner = await this.opts.owners.owner(webhook.team_id);
      if (owner) {
        await this.opts.mailer.send({
          to: owner.email,
          subject: `Webhook deactivated: ${webhook.url}`,
          text:
            `Hello ${owner.name},\n\n` +
            `The webhook ${webhook._id} (${webhook.url}) failed ${CONSECUTIVE_FAILURES_LIMIT} delivery attempts in a row and has been deactivated. ` +
            `No events are sent to it until it is re-activated (PUT /v1/webhooks/${webhook._id} with {"active": true}).\n\n` +
            `The delivery log (GET /v1/webhooks/${webhook._id}/deliveries) shows each attempt and the receiver's answers.\n`,
        });
      }
      await this.webhooks.updateOne({ _id: webhookId }, { $set: { alert_pending: false } });
    } catch (err) {
      this.opts.logger.error({ err, webhook_id: webhookId }, 'webhook deactivation alert not sent; retried later');
    }
  }

  async sendPendingAlerts(): Promise<void> {
    const pending = await this.webhooks.find({ alert_pending: true }, { projection: { _id: 1 } }).limit(100).toArray();
    for (const { _id } of pending) await this.sendAlert(_id);
  }
}
