// A webhook delivery's body, and the headers the webhooks service would sign it with
// at an offset from a fixed instant, for the checks of the SDK's verifyWebhook.
import { createHmac } from 'node:crypto';

export const DELIVERY_SECRET = 'whsec_test';

export const deliveryBody = JSON.stringify({
  id: 'evt_01jd3kc4d6f8h0k2n4q6s8u0w2',
  type: 'case.created',
  api_version: 'v1',
  created_at: '2026-11-27T10:00:00.000Z',
  data: { object: {}, previous_attributes: null },
  team_id: 'team_x',
  webhook_id: 'wh_x',
});

/** The verifier's clock: the delivery's creation. */
export const deliveryNow = new Date('2026-11-27T10:00:00Z');

/** The delivery's headers, its timestamp `offsetSeconds` from deliveryNow, signed with DELIVERY_SECRET. */
export function signedAt(offsetSeconds: number): Record<string, string> {
  const ts = String(deliveryNow.getTime() / 1000 + offsetSeconds);
  return {
    'X-Service-Timestamp': ts,
    'X-Service-Signature': createHmac('sha256', DELIVERY_SECRET).update(`${ts}.${deliveryBody}`).digest('hex'),
  };
}
