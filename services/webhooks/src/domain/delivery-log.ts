// The delivery log (extension): every attempt of every delivery of a webhook, and
// a retry on demand.
import type { Db } from 'mongodb';
import { businessRule, notFound } from '@lpm/shared/errors';
import { isId } from '@lpm/shared/ids';
import { pageWindow, parseSort, type ListQuery } from '@lpm/shared/http/pagination';
import type { AttemptRecord, DeliveryRecord } from '../data/webhook-entity.ts';
import type { Webhooks } from './webhooks.ts';

type Who = { teamId: string };

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);
const deliveryNotFound = () => notFound('Delivery not found');

export class DeliveryLog {
  private readonly db: Db;
  private readonly webhooks: Webhooks;
  private readonly retryNow: (d: DeliveryRecord) => Promise<void>;

  constructor(db: Db, webhooks: Webhooks, retryNow: (d: DeliveryRecord) => Promise<void>) {
    this.db = db;
    this.webhooks = webhooks;
    this.retryNow = retryNow;
  }

  private get deliveries() {
    return this.db.collection<DeliveryRecord>('deliveries');
  }

  async list(who: Who, webhookId: string, q: ListQuery) {
    await this.webhooks.load(who.teamId, webhookId);
    const { skip, limit } = pageWindow(q);
    const { direction } = parseSort(q.sort, '-created_at');
    const filter = { webhook_id: webhookId, team_id: who.teamId };
    const [rows, total] = await Promise.all([
      this.deliveries.find(filter, { projection: { body: 0 } }).sort({ created_at: direction, _id: direction }).skip(skip).limit(limit).toArray(),
      this.deliveries.countDocuments(filter),
    ]);
    const attempts = rows.length
      ? await this.db.collection<AttemptRecord>('attempts').find({ delivery_id: { $in: rows.map((d) => d._id) } }).sort({ attempt: 1 }).toArray()
      : [];
    return { items: rows.map((d) => shape(d, attempts.filter((a) => a.delivery_id === d._id))), total };
  }

  async retry(who: Who, webhookId: string, deliveryId: string) {
    const webhook = await this.webhooks.load(who.teamId, webhookId);
    if (!isId('dlv', deliveryId)) throw deliveryNotFound();
    const delivery = await this.deliveries.findOne({ _id: deliveryId, webhook_id: webhookId, team_id: who.teamId });
    if (!delivery) throw deliveryNotFound();
    if (!webhook.active) throw businessRule('Webhook is inactive', 'webhook_inactive');
    if (delivery.status === 'pending') throw businessRule('Delivery already pending', 'delivery_pending');
    await this.retryNow(delivery);
    return { id: delivery._id, event_id: delivery.event_id, event_type: delivery.event_type, status: 'pending', attempts_count: delivery.attempts_count };
  }
}

function shape(d: DeliveryRecord, attempts: AttemptRecord[]) {
  return {
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
  };
}
