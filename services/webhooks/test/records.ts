// Webhooks and deliveries built as the service stores them, for tests that seed the
// store directly.
import { newId } from '@lpm/shared/ids';
import type { DeliveryRecord, WebhookRecord } from '../src/data/webhook-entity.ts';

/** An active webhook of the team on every event, its key the URL itself and its secret a placeholder, unless `fields` say otherwise. */
export function webhookRecord(teamId: string, url: string, fields: Partial<WebhookRecord> = {}): WebhookRecord {
  const now = new Date();
  return {
    _id: newId('wh'),
    team_id: teamId,
    url,
    url_key: url,
    description: null,
    events: ['*'],
    active: true,
    secret_sealed: 'sealed',
    active_since: now,
    alert_pending: false,
    created_at: now,
    updated_at: now,
    ...fields,
  };
}

/**
 * A client.created delivery to the webhook, created and last changed at `at`: a
 * pending one due then, any other after one attempt then; `fields` over it.
 */
export function deliveryRecord(
  teamId: string,
  webhookId: string,
  status: DeliveryRecord['status'],
  at: Date,
  fields: Partial<DeliveryRecord> = {},
): DeliveryRecord {
  return {
    _id: newId('dlv'),
    team_id: teamId,
    webhook_id: webhookId,
    event_id: newId('evt'),
    event_type: 'client.created',
    body: '{}',
    status,
    attempts_count: status === 'pending' ? 0 : 1,
    last_attempt_at: status === 'pending' ? null : at,
    next_attempt_at: status === 'pending' ? at : null,
    created_at: at,
    updated_at: at,
    ...fields,
  };
}
