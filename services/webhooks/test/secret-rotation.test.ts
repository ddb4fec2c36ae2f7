// Secret rotation's rules on their own: which previous secrets a rotation keeps
// (at most 3, the most recently retired first, none expired), when the last one
// stops signing, and the signing keys a webhook signs with at a given instant: the
// current secret's and those of its previous secrets still live then, each secret
// opened once.
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { PreviousSecret } from '../src/data/webhook-entity.ts';
import { SecretBox } from '../src/domain/secret-box.ts';
import { MAX_PREVIOUS_SECRETS, liveSecrets, previousExpiresAt, retire } from '../src/domain/secret-rotation.ts';
import { SigningKeyCache } from '../src/domain/signing-key-cache.ts';
import { generateSecret, signatureHeaders } from '../src/domain/signing.ts';

const HOUR = 3_600_000;
const now = new Date('2026-11-29T10:00:00.000Z');
const at = (hours: number) => new Date(now.getTime() + hours * HOUR);

describe('retire', () => {
  test('when a secret is retired for 24 hours, then it leads the previous secrets and expires 24 hours later', () => {
    const before: PreviousSecret[] = [{ sealed: 'older', expires_at: at(5) }];
    expect(retire('current', before, 24, now)).toEqual([
      { sealed: 'current', expires_at: at(24) },
      { sealed: 'older', expires_at: at(5) },
    ]);
  });

  test('when a fourth previous secret would live, then the one retired longest ago is dropped', () => {
    let previous: PreviousSecret[] = [];
    for (const sealed of ['s1', 's2', 's3', 's4']) previous = retire(sealed, previous, 72, now);
    expect(previous.map((s) => s.sealed)).toEqual(['s4', 's3', 's2']);
    expect(previous).toHaveLength(MAX_PREVIOUS_SECRETS);
  });

  test('when previous secrets have expired, or the retired one gets 0 hours, then they are not kept', () => {
    const before: PreviousSecret[] = [
      { sealed: 'expired', expires_at: at(-1) },
      { sealed: 'just-expired', expires_at: now },
      { sealed: 'live', expires_at: at(1) },
    ];
    expect(retire('current', before, 0, now)).toEqual([{ sealed: 'live', expires_at: at(1) }]);
    expect(liveSecrets(before, now).map((s) => s.sealed)).toEqual(['live']);
    expect(liveSecrets(null, now)).toEqual([]);
  });
});

describe('previousExpiresAt', () => {
  test('when previous secrets live, then it is the latest expiry among them; when none does, null', () => {
    const previous: PreviousSecret[] = [
      { sealed: 'a', expires_at: at(2) },
      { sealed: 'b', expires_at: at(48) },
      { sealed: 'c', expires_at: at(-1) },
    ];
    expect(previousExpiresAt({ previous_secrets: previous }, now)).toEqual(at(48));
    expect(previousExpiresAt({ previous_secrets: previous }, at(48))).toBeNull();
    expect(previousExpiresAt({}, now)).toBeNull();
  });
});

describe('SigningKeyCache', () => {
  const box = new SecretBox(randomBytes(32));
  const body = '{"id":"evt_01","type":"client.created"}';
  const [current, old] = [generateSecret(), generateSecret()];
  const webhook = {
    secret_sealed: box.seal(current),
    previous_secrets: [{ sealed: box.seal(old), expires_at: at(1) }],
  };

  test('when a previous secret is live, then a delivery signed with the keys verifies with either secret', () => {
    const keys = new SigningKeyCache(box, 10).keysOf(webhook, now);
    expect(keys).toHaveLength(2);
    const signed = signatureHeaders(keys, 'evt_01', body);
    for (const s of [current, old]) expect(new Webhook(s).verify(body, signed)).toEqual(JSON.parse(body));
  });

  test('when a previous secret has expired by the time of signing, then only the current secret signs and the old one fails verification', () => {
    const keys = new SigningKeyCache(box, 10).keysOf(webhook, at(1));
    expect(keys).toHaveLength(1);
    const signed = signatureHeaders(keys, 'evt_01', body);
    expect(new Webhook(current).verify(body, signed)).toEqual(JSON.parse(body));
    expect(() => new Webhook(old).verify(body, signed)).toThrow();
  });

  test('when a webhook signs again, then its secrets are not opened again: the same keys come back', () => {
    const cache = new SigningKeyCache(box, 10);
    const first = cache.keysOf(webhook, now);
    const second = cache.keysOf(webhook, now);
    expect(second[0]).toBe(first[0]);
    expect(second[1]).toBe(first[1]);
  });

  test('when more secrets are seen than the cache keeps, then the oldest is opened again and the others are kept', () => {
    const cache = new SigningKeyCache(box, 2);
    const hooks = [generateSecret(), generateSecret(), generateSecret()].map((s) => ({ secret_sealed: box.seal(s) }));
    const [a, b] = hooks.map((h) => cache.keysOf(h)[0]);
    expect(cache.keysOf(hooks[1])[0]).toBe(b);
    expect(cache.keysOf(hooks[0])[0]).not.toBe(a);
  });
});
