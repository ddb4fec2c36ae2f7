import { createHash, randomFillSync } from 'node:crypto';
import { ulid } from 'ulid';

export type IdKind = 'deal' | 'cli' | 'act' | 'case' | 'fin' | 'wh' | 'evt' | 'team' | 'user' | 'key' | 'dlv' | 'job';

const ULID_RE = /^[0-9a-hjkmnp-tv-z]{26}$/;

// ulid's own random source makes one crypto call per character (16 an id), which
// showed in CPU profiles; this one refills a buffer of random bytes. A byte / 256
// picks each of ulid's 32 symbols with equal chance.
const pool = Buffer.alloc(4096);
let next = pool.length;
function randomFraction(): number {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  return pool[next++]! / 256;
}

/** A new id: kind prefix + lower-case ULID (time-ordered), e.g. `cli_01jd3k...`. */
export function newId(kind: IdKind): string {
  return `${kind}_${ulid(undefined, randomFraction).toLowerCase()}`;
}

/**
 * The id of `key`: the same key gives the same id wherever it is made (a kind
 * prefix and a ULID of `at`, its random part taken from the key's SHA-256), so a
 * record made again from the same input is refused as a duplicate.
 */
export function derivedId(kind: IdKind, at: number, key: string): string {
  const digest = createHash('sha256').update(key).digest();
  let i = 0;
  return `${kind}_${ulid(at, () => digest[i++]! / 256).toLowerCase()}`;
}

/** True when s is an id of this kind; a path id of another kind is answered 404. */
export function isId(kind: IdKind, s: string): boolean {
  return s.startsWith(`${kind}_`) && ULID_RE.test(s.slice(kind.length + 1));
}
