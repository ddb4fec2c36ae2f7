// After 6 failed attempts in a row (since creation or re-activation), or at once when
// the receiver answers 410 Gone, a webhook is made inactive and its team's owner gets
// an alert e-mail (docs/decisions.md §5 "Webhooks").
// Failures in a row are counted by the counter fold, on the webhook's counters
// document, and checked here after each fold (CounterFold): the attempt's own path
// reads nothing for it. A 410 Gone is acted on by the attempt that got it.
// The e-mail is owed from the moment of deactivation (alert_pending), so one that
// fails is sent again by the maintenance job.
import type { Logger } from '@lpm/shared/logger';
import type { Mailer } from '@lpm/shared/mailer';
import type { DirectoryUser } from '@lpm/shared/upstream/user-directory';
import type { CountersRepository } from '../data/counters-repository.ts';
import type { DeactivationReason, WebhookRecord } from '../data/webhook-entity.ts';
import type { WebhooksRepository } from '../data/webhooks-repository.ts';
import { shownUrl } from './shown-url.ts';
import { endpointsDisabled } from './delivery-metrics.ts';

export const CONSECUTIVE_FAILURES_LIMIT = 6;

export interface DeactivationOptions {
  webhooks: WebhooksRepository;
  counters: Pick<CountersRepository, 'failuresInARow'>;
  mailer: Mailer;
  owners: { owner(teamId: string): Promise<DirectoryUser | null> };
  logger: Logger;
}

const whyDeactivated = (w: WebhookRecord) =>
  w.deactivated_reason === 'gone'
    ? 'answered 410 Gone'
    : `failed ${CONSECUTIVE_FAILURES_LIMIT} delivery attempts in a row`;

export class Deactivation {
  private readonly opts: DeactivationOptions;

  constructor(opts: DeactivationOptions) {
    this.opts = opts;
  }

  /**
   * After a fold added failures to these webhooks: each still active whose failures in
   * a row reached the limit is made inactive, and its alert sent.
   */
  async afterFailures(webhookIds: string[]): Promise<void> {
    for (const id of webhookIds) {
      const webhook = await this.opts.webhooks.byId(id);
      if (!webhook?.active) continue;
      const failures = await this.opts.counters.failuresInARow(id, webhook.active_since, CONSECUTIVE_FAILURES_LIMIT);
      if (failures < CONSECUTIVE_FAILURES_LIMIT) continue;
      if ((await this.deactivate(webhook, 'failures')).deactivatedNow) await this.sendAlert(id);
    }
  }

  /** After a 410 Gone: the receiver says the endpoint is gone for good, so the webhook is made inactive at once. */
  afterGone(webhook: WebhookRecord): Promise<{ inactive: boolean; deactivatedNow: boolean }> {
    return this.deactivate(webhook, 'gone');
  }

  private async deactivate(
    webhook: WebhookRecord,
    reason: DeactivationReason,
  ): Promise<{ inactive: boolean; deactivatedNow: boolean }> {
    const deactivatedNow = await this.opts.webhooks.deactivate(webhook, reason);
    if (deactivatedNow) {
      endpointsDisabled.inc();
      const why =
        reason === 'gone' ? 'webhook deactivated after 410 Gone' : 'webhook deactivated after consecutive failures';
      this.opts.logger.info({ webhook_id: webhook._id, team_id: webhook.team_id, url: shownUrl(webhook.url) }, why);
    }
    return { inactive: true, deactivatedNow };
  }

  /** Sends the alert a deactivated webhook owes, once; failures are logged and retried by sendPendingAlerts. */
  async sendAlert(webhookId: string): Promise<void> {
    const webhook = await this.opts.webhooks.owingAlert(webhookId);
    if (!webhook) return;
    try {
      const owner = await this.opts.owners.owner(webhook.team_id);
      if (owner) {
        // Scheme and host only: the mail (and the mailer's log of it) must not carry a credential of the URL.
        const url = shownUrl(webhook.url);
        await this.opts.mailer.send({
          to: owner.email,
          subject: `Webhook deactivated: ${url}`,
          text:
            `Hello ${owner.name},\n\n` +
            `The webhook ${webhook._id} (${url}) ${whyDeactivated(webhook)} and has been deactivated. ` +
            `No events are sent to it until it is re-activated (PUT /v1/webhooks/${webhook._id} with {"active": true}).\n\n` +
            `The delivery log (GET /v1/webhooks/${webhook._id}/deliveries) shows each attempt and the receiver's answers.\n`,
        });
      }
      await this.opts.webhooks.alertSent(webhookId);
    } catch (err) {
      this.opts.logger.error({ err, webhook_id: webhookId }, 'webhook deactivation alert not sent; retried later');
    }
  }

  async sendPendingAlerts(): Promise<void> {
    for (const id of await this.opts.webhooks.owingAlerts(100)) await this.sendAlert(id);
  }
}
