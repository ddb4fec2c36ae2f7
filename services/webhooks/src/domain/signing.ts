// Delivery signatures: the API's X-Service-* headers and, for receivers that use
// a Standard Webhooks library, the webhook-* headers of that specification.
import { createHmac, createSecretKey, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/** A webhook secret in the Standard Webhooks format: whsec_ + base64 of 32 random bytes. */
export function generateSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

const serviceSignature = (key: string | KeyObject, timestamp: string, body: string | Buffer) =>
  createHmac('sha256', key).update(`${timestamp}.`).update(body).digest('hex');

/** A webhook secret's two HMAC keys, made once per secret: createHmac turns a Buffer key into a KeyObject on every call, at about 5x the HMAC's own cost. */
export interface SigningKeys {
  /** X-Service-Signature: keyed with the secret's text. */
  service: KeyObject;
  /** webhook-signature (Standard Webhooks): keyed with the bytes the base64 after whsec_ encodes, not with the text. */
  standard: KeyObject;
}

export function signingKeys(secret: string): SigningKeys {
  const standard = Buffer.from(
    secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
    'base64',
  );
  return { service: createSecretKey(Buffer.from(secret, 'utf8')), standard: createSecretKey(standard) };
}

/**
 * The headers of a signed delivery. `keys` is the current secret's, or the current one's
 * followed by those of the previous secrets still live (a rotation's overlap):
 * webhook-signature then carries one `v1,<sig>` per secret, space separated, as the
 * Standard Webhooks specification has it; X-Service-Signature is the current secret's only.
 */
export function signatureHeaders(
  keys: SigningKeys | readonly [SigningKeys, ...SigningKeys[]],
  eventId: string,
  body: string,
  now = new Date(),
): Record<string, string> {
  const all = 'service' in keys ? [keys] : keys;
  const timestamp = String(Math.floor(now.getTime() / 1000));
  const standard = (k: SigningKeys) =>
    `v1,${createHmac('sha256', k.standard).update(`${eventId}.${timestamp}.${body}`).digest('base64')}`;
  return {
    'Content-Type': 'application/json',
    'X-Service-Signature': serviceSignature(all[0].service, timestamp, body),
    'X-Service-Timestamp': timestamp,
    'X-Service-Event-Id': eventId,
    'webhook-id': eventId,
    'webhook-timestamp': timestamp,
    'webhook-signature': all.map(standard).join(' '),
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
