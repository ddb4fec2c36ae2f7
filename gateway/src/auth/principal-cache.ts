// Key lookups cached for at most ttlMs, hits and misses alike: a revoked key stops
// working within that time, a key just created works on the next second. Concurrent
// lookups of one key share a single query. A team's entries can be dropped at once,
// when its settings change.
//
// Past its TTL, a key found is still served while the store's principal change
// counter (principal-changes.ts) reads as it did before the entry's lookup started,
// in a poll started less than the TTL ago: every write that changes a principal (a
// key revoked, a plan or settings changed) bumps the counter once it is done, so a
// change is seen within the TTL all the same, and a key in use costs no store read
// per second. Any change drops every such entry at once (changes are rare); while
// the polls do not answer, the TTL alone applies. An entry is looked up again after
// maxAgeMs whatever the counter says, so a change whose bump was lost still applies.
//
// Keys found and keys not found live apart, each bounded on its own: a flood of
// distinct unknown keys only ever evicts other unknown keys (and lookups still
// running), never a key that was found. Besides, the cache remembers which keys were
// found recently (recentlyValid), so the failed-authentication throttle can let them through.
import type { Principal } from '../domain/accounts.ts';
import { keyDigest } from '../domain/keys.ts';
import type { ChangePoll } from './principal-changes.ts';

interface Entry {
  expiresAt: number;
  principal: Promise<Principal | null>;
  /** Set once the lookup has found a principal. */
  teamId?: string;
  /** What the lookup found, once it has (found() serves it without a promise). */
  found?: Principal;
  /** Dropped by forgetTeam or clear while its lookup ran: what it finds is not cached. */
  dropped?: boolean;
  /** The change counter's last poll before the lookup started, if any. */
  version?: number;
}

export interface PrincipalCacheOptions {
  lookup: (rawKey: string) => Promise<Principal | null>;
  ttlMs?: number;
  /** The polls of the store's principal change counter; without them, the TTL alone applies. */
  changes?: { readonly latest: ChangePoll | undefined };
  /** How long the counter may keep a key found served since its lookup (default a minute). */
  maxAgeMs?: number;
  /** Keys found kept at most (default 10 000). */
  maxEntries?: number;
  /** Keys not found and lookups running kept at most (default maxEntries). */
  maxMisses?: number;
  /** How long a key found stays recentlyValid after its last successful lookup (default a day). */
  recentForMs?: number;
  now?: () => number;
}

export class PrincipalCache {
  /** Keys found: only a successful lookup puts an entry here. */
  private readonly hits = new Map<string, Entry>();
  /** Lookups running and keys not found. */
  private readonly misses = new Map<string, Entry>();
  /** Digest -> last successful lookup, least recent first. */
  private readonly recent = new Map<string, number>();
  private readonly lookup: PrincipalCacheOptions['lookup'];
  private readonly ttlMs: number;
  private readonly changes: PrincipalCacheOptions['changes'];
  private readonly maxAgeMs: number;
  private readonly maxEntries: number;
  private readonly maxMisses: number;
  private readonly recentForMs: number;
  private readonly now: () => number;

  constructor(opts: PrincipalCacheOptions) {
    this.lookup = opts.lookup;
    this.ttlMs = opts.ttlMs ?? 1000;
    this.changes = opts.changes;
    this.maxAgeMs = opts.maxAgeMs ?? 60_000;
    this.maxEntries = opts.maxEntries ?? 10_000;
    this.maxMisses = opts.maxMisses ?? this.maxEntries;
    this.recentForMs = opts.recentForMs ?? 86_400_000;
    this.now = opts.now ?? Date.now;
  }

  /** `id`: the key's digest (keyDigest), when the caller has it already. */
  get(rawKey: string, id = keyDigest(rawKey)): Promise<Principal | null> {
    // Keyed by digest so raw keys are not kept in memory.
    const now = this.now();
    const cached = this.hit(id, now) ?? live(this.misses, id, now);
    if (cached) return cached.principal;
    // The entry expires ttlMs after the query started, so what it holds is never older than that.
    const version = this.changes?.latest?.version;
    const principal = this.lookup(rawKey);
    const entry: Entry = { expiresAt: now + this.ttlMs, principal, version };
    // Unconfirmed until the lookup finds the key: until then it may only evict other unconfirmed entries.
    put(this.misses, id, entry, this.maxMisses);
    principal.then(
      (found) => {
        if (!found) {
          this.recent.delete(id);
          return;
        }
        if (this.misses.get(id) === entry) this.misses.delete(id);
        put(this.recent, id, this.now(), this.maxEntries);
        entry.teamId = found.team.id;
        entry.found = found;
        if (!entry.dropped && entry.expiresAt > this.now()) put(this.hits, id, entry, this.maxEntries);
      },
      () => {
        if (this.misses.get(id) === entry) this.misses.delete(id);
      },
    );
    return principal;
  }

  /** The principal of a key found and still servable (as get would answer), without waiting: undefined otherwise. */
  found(id: string): Principal | undefined {
    return this.hit(id, this.now())?.found;
  }

  /**
   * True when the key was found by a lookup within recentForMs (a day), even if its
   * cache entry has expired since, or its entry is still served. Only says the key was
   * valid: a request with it is still looked up (get) and refused once revoked; a
   * lookup not finding it forgets it.
   */
  recentlyValid(rawKey: string, id = keyDigest(rawKey)): boolean {
    const now = this.now();
    const at = this.recent.get(id);
    return (at !== undefined && now - at < this.recentForMs) || this.hit(id, now) !== undefined;
  }

  /** The key's entry if found and still servable: within its TTL, or confirmed by a recent poll of the change counter. */
  private hit(id: string, now: number): Entry | undefined {
    const entry = this.hits.get(id);
    if (entry === undefined || entry.expiresAt > now) return entry;
    const poll = this.changes?.latest;
    const lookedUpAt = entry.expiresAt - this.ttlMs;
    if (
      poll !== undefined &&
      entry.version === poll.version &&
      now - poll.startedAt < this.ttlMs &&
      now - lookedUpAt < this.maxAgeMs
    )
      return entry;
    this.hits.delete(id);
    return undefined;
  }

  /** Drops every entry not known to be another team's: a lookup still running may have read the team before a change. */
  forgetTeam(teamId: string): void {
    for (const entry of this.misses.values()) entry.dropped = true;
    this.misses.clear();
    for (const [id, entry] of this.hits) {
      if (entry.teamId !== teamId) continue;
      entry.dropped = true;
      this.hits.delete(id);
    }
  }

  clear(): void {
    for (const entry of [...this.hits.values(), ...this.misses.values()]) entry.dropped = true;
    this.hits.clear();
    this.misses.clear();
    this.recent.clear();
  }
}

/** The map's entry for id unless expired; an expired one is removed. */
function live(map: Map<string, Entry>, id: string, now: number): Entry | undefined {
  const entry = map.get(id);
  if (entry === undefined || entry.expiresAt > now) return entry;
  map.delete(id);
  return undefined;
}

/** Sets id last (newest), first dropping the oldest entries while the map is full: the expired ones, or those served longest since their lookup. */
function put<V>(map: Map<string, V>, id: string, value: V, max: number): void {
  map.delete(id);
  for (const oldest of map.keys()) {
    if (map.size < max) break;
    map.delete(oldest);
  }
  map.set(id, value);
}
