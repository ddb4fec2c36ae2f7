// verifyWebhook: this API's delivery signature (README, "Webhooks, for integrators"). The
// signed text is `${X-Service-Timestamp}.${raw body}`, the key the webhook secret,
// the signature the lowercase hex HMAC-SHA256 in X-Service-Signature; the
// timestamp must be within the tolerance of now (replay protection).
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { webhooks } from './schema.d.ts';

/** Any event a webhook can receive, told apart by `type`. */
export type WebhookEvent = {
  [E in keyof webhooks]: webhooks[E]['post'] extends { requestBody: { content: { 'application/json': infer B } } }
    ? B
    : never;
}[keyof webhooks];

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

export interface VerifyOptions {
  /** How far the timestamp may be from now, either way (default 300 s): a finite number >= 0, else verifyWebhook throws a RangeError. */
  toleranceSeconds?: number;
  /** The current time (tests). */
  now?: Date;
}

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : headers[key];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The event of a delivery whose signature and timestamp check out; throws
 * WebhookVerificationError otherwise. `rawBody` is the body exactly as received
 * (not parsed and re-serialized).
 */
export function verifyWebhook(
  rawBody: string | Buffer,
  headers: HeaderBag,
  secret: string,
  opts: VerifyOptions = {},
): WebhookEvent {
  const tolerance = opts.toleranceSeconds ?? 300;
  // Every comparison with NaN is false: a tolerance of NaN (`Number(process.env.X)` with X unset) would accept any timestamp.
  if (typeof tolerance !== 'number' || !Number.isFinite(tolerance) || tolerance < 0) {
    throw new RangeError(
      `toleranceSeconds must be a finite number >= 0, not ${typeof tolerance === 'string' ? JSON.stringify(tolerance) : String(tolerance)}`,
    );
  }
  const now = (opts.now ?? new Date()).getTime() / 1000;
  if (!Number.isFinite(now)) throw new RangeError('now must be a valid Date');
  const signature = header(headers, 'x-service-signature');
  const timestamp = header(headers, 'x-service-timestamp');
  if (!signature || !timestamp)
    throw new WebhookVerificationError('Missing X-Service-Signature or X-Service-Timestamp');
  if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookVerificationError('Invalid timestamp');
  if (Math.abs(now - Number(timestamp)) > tolerance)
    throw new WebhookVerificationError('Timestamp outside the tolerance');
  const expected = Buffer.from(createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex'));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    throw new WebhookVerificationError('Signature mismatch');
  return JSON.parse(rawBody.toString()) as WebhookEvent;
}
