// The delivery log (extension): every attempt of every delivery of a webhook, and
// a retry on demand.
import { businessRule } from '@lpm/shared/errors';
import { isId } from '@lpm/shared/ids';
import { exact } from '@lpm/shared/http/schemas';
import { iso } from '@lpm/shared/time';
import type { DeliveriesRepository, LogMatch } from '../data/deliveries-repository.ts';
import type { AttemptRecord, DeliveryRecord } from '../data/webhook-entity.ts';
import { deliveryNotFound } from '../contract/webhook-errors.ts';
import type { DeliveriesQuery, DeliveryItem, DeliveryRetried } from '../contract/webhook-schemas.ts';
import type { Webhooks } from './webhooks.ts';

type Who = { teamId: string };

export class DeliveryLog {
  private readonly deliveries: DeliveriesRepository;
  private readonly webhooks: Webhooks;
  private readonly retryNow: (d: DeliveryRecord) => Promise<void>;

  constructor(deliveries: DeliveriesRepository, webhooks: Webhooks, retryNow: (d: DeliveryRecord) => Promise<void>) {
    this.deliveries = deliveries;
    this.webhooks = webhooks;
    this.retryNow = retryNow;
  }

  async list(who: Who, webhookId: string, q: DeliveriesQuery) {
    await this.webhooks.load(who.teamId, webhookId);
    const { status, event_type, event_id, ...list } = q;
    const match: LogMatch = { ...(status ? { status } : {}), ...(event_type ? { event_type } : {}), ...(event_id ? { event_id } : {}) };
    const { records, total } = await this.deliveries.page(who.teamId, webhookId, list, match);
    const attempts = await this.deliveries.attemptsOf(webhookId, records);
    return { items: records.map((d) => shape(d, attempts.filter((a) => a.delivery_id === d._id))), total };
  }

  async retry(who: Who, webhookId: string, deliveryId: string) {
    const webhook = await this.webhooks.load(who.teamId, webhookId);
    if (!isId('dlv', deliveryId)) throw deliveryNotFound();
    const delivery = await this.deliveries.findForWebhook(who.teamId, webhookId, deliveryId);
    if (!delivery) throw deliveryNotFound();
    if (!webhook.active) throw businessRule('Webhook is inactive', 'webhook_inactive');
    if (delivery.status === 'pending') throw businessRule('Delivery already pending', 'delivery_pending');
    await this.retryNow(delivery);
    return exact<DeliveryRetried>()({ id: delivery._id, event_id: delivery.event_id, event_type: delivery.event_type, status: 'pending', attempts_count: delivery.attempts_count });
  }
}

function shape(d: DeliveryRecord, attempts: AttemptRecord[]): DeliveryItem {
  return exact<DeliveryItem>()({
    id: d._id,
    event_id: d.event_id,
    event_type: d.event_type,
    status: d.status,
    attempts_count: d.attempts_count,
    next_attempt_at: iso(d.next_attempt_at),
    attempts: attempts.map((a) => ({
      attempt: a.attempt,
      at: iso(a.at),
      success: a.ok,
      status_code: a.status_code,
      latency_ms: a.latency_ms,
      error_class: a.error_class,
      response_body: a.response_body,
    })),
    created_at: iso(d.created_at),
    updated_at: iso(d.updated_at),
  });
}
