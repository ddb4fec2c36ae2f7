// Delivery signatures: the spec's X-Service-* headers, checked against vectors
// computed here and with the openssl CLI, and the Standard Webhooks headers,
// checked with the official standardwebhooks package, with one signature per
// secret while previous secrets still sign.
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { generateSecret, signatureHeaders, signingKeys, verifyServiceSignature } from '../src/domain/signing.ts';

const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const body = '{"id":"evt_01","type":"case.created"}';
const at = new Date(1_700_000_000_500);

describe('generateSecret', () => {
  test('when a secret is made, then it is whsec_ and the base64 of 32 random bytes', () => {
    const a = generateSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    expect(generateSecret()).not.toBe(a);
  });
});

describe('signatureHeaders', () => {
  const headers = signatureHeaders(signingKeys(secret), 'evt_01', body, at);

  test('when a body is signed, then the headers carry the event id and the Unix seconds', () => {
    expect(headers).toMatchObject({
      'Content-Type': 'application/json',
      'X-Service-Timestamp': '1700000000',
      'X-Service-Event-Id': 'evt_01',
      'webhook-id': 'evt_01',
      'webhook-timestamp': '1700000000',
    });
  });

  test('when a body is signed, then X-Service-Signature is the hex HMAC-SHA256 of "timestamp.body" keyed with the secret text', () => {
    // From `printf '%s' "1700000000.$BODY" | openssl dgst -sha256 -hmac "$SECRET"`.
    expect(headers['X-Service-Signature']).toBe('2e688daf8b164a77dbacf727a5a51daeffa17550847fca24e8f4ba65f23cbf02');
    expect(headers['X-Service-Signature']).toBe(
      createHmac('sha256', Buffer.from(secret, 'utf8')).update(`1700000000.${body}`).digest('hex'),
    );
  });

  test('when a body is signed, then webhook-signature is v1, and the base64 HMAC of "id.timestamp.body" keyed with the decoded secret', () => {
    const key = Buffer.from('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'base64');
    expect(headers['webhook-signature']).toBe('v1,e+V4QuoublnAc9qmvNuZHPGtU0e18VuiR6xsx5IMRPE=');
    expect(headers['webhook-signature']).toBe(
      `v1,${createHmac('sha256', key).update(`evt_01.1700000000.${body}`).digest('base64')}`,
    );
  });

  test('when the standardwebhooks package verifies a fresh delivery, then it accepts it and rejects a changed body', () => {
    const fresh = generateSecret();
    const signed = signatureHeaders(signingKeys(fresh), 'evt_02', body);
    const wh = new Webhook(fresh);
    expect(wh.verify(body, signed)).toEqual(JSON.parse(body));
    expect(() => wh.verify(`${body} `, signed)).toThrow();
    expect(() => new Webhook(generateSecret()).verify(body, signed)).toThrow();
  });

  test('when previous secrets still sign, then webhook-signature carries one v1 signature per secret, the current first, and X-Service-Signature is the current one only', () => {
    const [current, old, older] = [generateSecret(), generateSecret(), generateSecret()];
    const signed = signatureHeaders([signingKeys(current), signingKeys(old), signingKeys(older)], 'evt_04', body, at);
    const alone = (s: string) => signatureHeaders(signingKeys(s), 'evt_04', body, at)['webhook-signature'];
    expect(signed['webhook-signature']).toBe(`${alone(current)} ${alone(old)} ${alone(older)}`);
    expect(signed['X-Service-Signature']).toBe(
      signatureHeaders(signingKeys(current), 'evt_04', body, at)['X-Service-Signature'],
    );
    const fresh = signatureHeaders([signingKeys(current), signingKeys(old)], 'evt_05', body);
    for (const s of [current, old]) expect(new Webhook(s).verify(body, fresh)).toEqual(JSON.parse(body));
    expect(() => new Webhook(older).verify(body, fresh)).toThrow();
  });

  test('when the body has non-ASCII text, then both signatures cover its UTF-8 bytes', () => {
    const text = '{"name":"Padaria São José – ✓"}';
    const signed = signatureHeaders(signingKeys(secret), 'evt_03', text, at);
    expect(signed['X-Service-Signature']).toBe(
      createHmac('sha256', secret)
        .update(Buffer.from(`1700000000.${text}`, 'utf8'))
        .digest('hex'),
    );
    expect(
      verifyServiceSignature(secret, '1700000000', Buffer.from(text, 'utf8'), signed['X-Service-Signature'], 300, at),
    ).toBe(true);
  });
});

describe('verifyServiceSignature', () => {
  const { 'X-Service-Signature': signature, 'X-Service-Timestamp': timestamp } = signatureHeaders(
    signingKeys(secret),
    'evt_01',
    body,
    at,
  );
  const seconds = (s: number) => new Date(at.getTime() + s * 1000);

  test('when the signature and timestamp match, then it is valid', () => {
    expect(verifyServiceSignature(secret, timestamp, body, signature, 300, at)).toBe(true);
    expect(verifyServiceSignature(secret, timestamp, body, signature, 300, seconds(299))).toBe(true);
    expect(verifyServiceSignature(secret, timestamp, body, signature, 300, seconds(-299))).toBe(true);
  });

  test('when the timestamp is more than the tolerance away, then it is rejected', () => {
    expect(verifyServiceSignature(secret, timestamp, body, signature, 300, seconds(301))).toBe(false);
    expect(verifyServiceSignature(secret, timestamp, body, signature, 300, seconds(-301))).toBe(false);
    expect(verifyServiceSignature(secret, timestamp, body, signature, 10, seconds(11))).toBe(false);
  });

  test('when anything signed differs, then it is rejected', () => {
    expect(verifyServiceSignature(secret, timestamp, `${body} `, signature, 300, at)).toBe(false);
    expect(verifyServiceSignature(`${secret}x`, timestamp, body, signature, 300, at)).toBe(false);
    expect(verifyServiceSignature(secret, String(Number(timestamp) + 1), body, signature, 300, at)).toBe(false);
    expect(verifyServiceSignature(secret, timestamp, body, signature.toUpperCase(), 300, at)).toBe(false);
    expect(verifyServiceSignature(secret, timestamp, body, signature.slice(0, -2), 300, at)).toBe(false);
    expect(verifyServiceSignature(secret, timestamp, body, '', 300, at)).toBe(false);
    expect(verifyServiceSignature(secret, ` ${timestamp}`, body, signature, 300, at)).toBe(false);
    expect(verifyServiceSignature(secret, 'abc', body, signature, 300, at)).toBe(false);
  });
});
