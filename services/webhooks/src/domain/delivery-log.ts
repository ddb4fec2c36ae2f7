// The delivery log (extension): every attempt of every delivery of a webhook, a
// retry on demand, and test sends (the catalog's example of an event, one attempt,
// counted apart from the webhook's other deliveries).
import type { EventType } from '@lpm/shared/events';
import { isId } from '@lpm/shared/ids';
import { exact } from '@lpm/shared/http/schemas';
import { iso } from '@lpm/shared/time';
import type { DeliveriesRepository, LogMatch } from '../data/deliveries-repository.ts';
import type { AttemptRecord, DeliveryRecord } from '../data/webhook-entity.ts';
import { deliveryNotFound, deliveryPending, webhookInactive } from '../contract/webhook-errors.ts';
import type { DeliveriesQuery, DeliveryItem, DeliveryRetried, WebhookTestQueued } from '../contract/webhook-schemas.ts';
import { newTestDelivery } from './delivery-records.ts';
import type { Webhooks } from './webhooks.ts';

type Who = { teamId: string };

/** Where deliveries asked for through the API go (Deliveries). */
export interface DeliveryQueue {
  /** One more attempt of a stored delivery, now. */
  retryNow(d: DeliveryRecord): Promise<void>;
  /** A new delivery stored pending, and its first attempt queued. */
  sendNew(d: DeliveryRecord): Promise<void>;
}

export class DeliveryLog {
  private readonly deliveries: DeliveriesRepository;
  private readonly webhooks: Webhooks;
  private readonly queue: DeliveryQueue;

  constructor(deliveries: DeliveriesRepository, webhooks: Webhooks, queue: DeliveryQueue) {
    this.deliveries = deliveries;
    this.webhooks = webhooks;
    this.queue = queue;
  }

  async list(who: Who, webhookId: string, q: DeliveriesQuery) {
    await this.webhooks.load(who.teamId, webhookId);
    const { status, event_type, event_id, ...list } = q;
    const match: LogMatch = {
      ...(status ? { status } : {}),
      ...(event_type ? { event_type } : {}),
      ...(event_id ? { event_id } : {}),
    };
    const { records, total } = await this.deliveries.page(who.teamId, webhookId, list, match);
    const attempts = await this.deliveries.attempts.attemptsOf(webhookId, records);
    return {
      items: records.map((d) =>
        shape(
          d,
          attempts.filter((a) => a.delivery_id === d._id),
        ),
      ),
      total,
    };
  }

  async retry(who: Who, webhookId: string, deliveryId: string) {
    const webhook = await this.webhooks.load(who.teamId, webhookId);
    if (!isId('dlv', deliveryId)) throw deliveryNotFound();
    const delivery = await this.deliveries.findForWebhook(who.teamId, webhookId, deliveryId);
    if (!delivery) throw deliveryNotFound();
    if (!webhook.active) throw webhookInactive();
    if (delivery.status === 'pending') throw deliveryPending();
    await this.queue.retryNow(delivery);
    return exact<DeliveryRetried>()({ ...queued(delivery), attempts_count: delivery.attempts_count });
  }

  /** Sends the catalog's example of `event`, signed as usual and marked `"test": true`, in the background. */
  async sendTest(who: Who, webhookId: string, event: EventType): Promise<WebhookTestQueued> {
    const webhook = await this.webhooks.load(who.teamId, webhookId);
    if (!webhook.active) throw webhookInactive();
    const delivery = newTestDelivery(event, who.teamId, webhookId, new Date());
    await this.queue.sendNew(delivery);
    return exact<WebhookTestQueued>()({ ...queued(delivery), attempts_count: 0 });
  }
}

function queued(d: DeliveryRecord) {
  return { id: d._id, event_id: d.event_id, event_type: d.event_type, status: 'pending', test: d.test === true };
}

function shape(d: DeliveryRecord, attempts: AttemptRecord[]): DeliveryItem {
  return exact<DeliveryItem>()({
    id: d._id,
    event_id: d.event_id,
    event_type: d.event_type,
    status: d.status,
    attempts_count: d.attempts_count,
    test: d.test === true,
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
