import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash, randomFillSync } from 'node:crypto';
import { decodeTime, ulid } from 'ulid';

export type IdKind =
  | 'deal'
  | 'cli'
  | 'act'
  | 'case'
  | 'fin'
  | 'wh'
  | 'evt'
  | 'team'
  | 'user'
  | 'key'
  | 'psn'
  | 'dlv'
  | 'job'
  | 'rcv'
  | 'pub';

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
  return pool[next++] / 256;
}

/** The ids a request makes when it is run again under the same Idempotency-Key. */
interface IdSeed {
  key: string;
  at: number;
  made: Map<IdKind, number>;
  /** Work a request left running past this (a timer it armed) makes random ids again. */
  until: number;
}

const seeds = new AsyncLocalStorage<IdSeed>();
const SEED_LIFE_MS = 60_000;

/**
 * Runs `fn` so that the ids it makes are derived from `key` and `at`: the n-th id of
 * a kind is the same every time `fn` runs with them. A POST run again under its
 * Idempotency-Key (its first run failed, or died, and may have stored its record)
 * then makes the same record id, and the store refuses a second record.
 */
export function withIdSeed<T>(key: string, at: number, fn: () => T): T {
  return seeds.run({ key, at, made: new Map(), until: Date.now() + SEED_LIFE_MS }, fn);
}

/** A new id: kind prefix + lower-case ULID (time-ordered), e.g. `cli_01jd3k...`; derived under withIdSeed. */
export function newId(kind: IdKind): string {
  const seed = seeds.getStore();
  if (seed && Date.now() < seed.until) {
    const n = seed.made.get(kind) ?? 0;
    seed.made.set(kind, n + 1);
    return derivedId(kind, seed.at, `${seed.key}\u0000${kind}\u0000${n}`);
  }
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
  return `${kind}_${ulid(at, () => digest[i++] / 256).toLowerCase()}`;
}

/** True when s is an id of this kind; a path id of another kind is answered 404. */
export function isId(kind: IdKind, s: string): boolean {
  return s.startsWith(`${kind}_`) && ULID_RE.test(s.slice(kind.length + 1));
}

/** The time (ms since the epoch) an id was made for: its ULID's; for a derivedId, the `at` it was given. */
export function idTime(id: string): number {
  return decodeTime(id.slice(id.indexOf('_') + 1));
}
