// Delivery signatures: the spec's X-Service-* headers and, for receivers that use
// a Standard Webhooks library, the webhook-* headers of that specification.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/** A webhook secret in the Standard Webhooks format: whsec_ + base64 of 32 random bytes. */
export function generateSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

const serviceSignature = (secret: string, timestamp: string, body: string | Buffer) =>
  createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');

/** Standard Webhooks keys with the bytes the base64 after whsec_ encodes, not with the text. */
const standardKey = (secret: string) =>
  Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');

export function signatureHeaders(secret: string, eventId: string, body: string, now = new Date()): Record<string, string> {
  const timestamp = String(Math.floor(now.getTime() / 1000));
  const standard = createHmac('sha256', standardKey(secret)).update(`${eventId}.${timestamp}.${body}`).digest('base64');
  return {
    'Content-Type': 'application/json',
    'X-Service-Signature': serviceSignature(secret, timestamp, body),
    'X-Service-Timestamp': timestamp,
    'X-Service-Event-Id': eventId,
    'webhook-id': eventId,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${standard}`,
  };
}

/**
 * The receiver's check of X-Service-Signature: HMAC-SHA256 of `${timestamp}.${body}`
 * keyed with the secret, compared in constant time, and the timestamp no further
 * than toleranceSeconds from now (replay protection). `body` is the raw body as received.
 */
export function verifyServiceSignature(
  secret: string,
  timestamp: string,
  body: string | Buffer,
  signature: string,
  toleranceSeconds = 300,
  now = new Date(),
): boolean {
  if (!/^\d{1,12}$/.test(timestamp)) return false;
  if (Math.abs(now.getTime() / 1000 - Number(timestamp)) > toleranceSeconds) return false;
  const expected = Buffer.from(serviceSignature(secret, timestamp, body));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
