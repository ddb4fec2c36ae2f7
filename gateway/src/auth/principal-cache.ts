// Key lookups cached for at most ttlMs, hits and misses alike: a revoked key stops
// working within that time, a key just created works on the next second. Concurrent
// lookups of one key share a single query. A team's entries can be dropped at once,
// when its settings change.
//
// A key in steady use is refreshed ahead: past refreshAfterMs, a request answered from
// an entry that already answered another starts one lookup in the background and is
// still answered from the entry, which keeps its expiry (ttlMs after its own query
// started, so what is served is never older than that). Once the refresh answers,
// its result replaces the entry: such a key never waits for the store, and a revoked
// one is refused from then on. A key used about once per TTL or less is not
// refreshed: its next request would find the refreshed entry expired too.
//
// Keys found and keys not found live apart, each bounded on its own: a flood of
// distinct unknown keys only ever evicts other unknown keys (and lookups still
// running), never a key that was found. Besides, the cache remembers which keys were
// found recently (recentlyValid), so the failed-authentication throttle can let them through.
import type { Principal } from '../domain/accounts.ts';
import { keyDigest } from '../domain/keys.ts';

interface Entry {
  expiresAt: number;
  principal: Promise<Principal | null>;
  /** Set once the lookup has found a principal. */
  teamId?: string;
  /** Dropped by forgetTeam or clear while its lookup ran: what it finds is not cached. */
  dropped?: boolean;
  /** Requests answered from the entry once its lookup found the key. */
  hits?: number;
  /** A hit whose refresh lookup is running. */
  refreshing?: boolean;
}

export interface PrincipalCacheOptions {
  lookup(rawKey: string): Promise<Principal | null>;
  ttlMs?: number;
  /** Age of a key found after which a request with it starts a refresh (default 3/4 of ttlMs: a quarter left for the lookup). */
  refreshAfterMs?: number;
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
  private readonly refreshAfterMs: number;
  private readonly maxEntries: number;
  private readonly maxMisses: number;
  private readonly recentForMs: number;
  private readonly now: () => number;

  constructor(opts: PrincipalCacheOptions) {
    this.lookup = opts.lookup;
    this.ttlMs = opts.ttlMs ?? 1000;
    this.refreshAfterMs = opts.refreshAfterMs ?? (this.ttlMs * 3) / 4;
    this.maxEntries = opts.maxEntries ?? 10_000;
    this.maxMisses = opts.maxMisses ?? this.maxEntries;
    this.recentForMs = opts.recentForMs ?? 86_400_000;
    this.now = opts.now ?? Date.now;
  }

  get(rawKey: string): Promise<Principal | null> {
    // Keyed by digest so raw keys are not kept in memory.
    const id = keyDigest(rawKey);
    const now = this.now();
    const hit = live(this.hits, id, now);
    if (hit) {
      hit.hits = (hit.hits ?? 0) + 1;
      const age = now - (hit.expiresAt - this.ttlMs);
      if (!hit.refreshing && hit.hits >= 2 && age >= this.refreshAfterMs) this.refresh(rawKey, id, hit, now);
      return hit.principal;
    }
    return live(this.misses, id, now)?.principal ?? this.query(rawKey, id, now).principal;
  }

  /** Looks the key up again while its hit is still served; a key no longer found stops being served once the answer is in. */
  private refresh(rawKey: string, id: string, hit: Entry, now: number): void {
    hit.refreshing = true;
    const entry = this.query(rawKey, id, now);
    entry.principal.then(
      (found) => {
        if (!found && this.hits.get(id) === hit) this.hits.delete(id);
        // Dropped meanwhile (forgetTeam): the next request after refreshAfterMs tries again.
        if (entry.dropped) hit.refreshing = false;
      },
      () => {
        // The store did not answer: the hit is served until it expires, and retried meanwhile.
        hit.refreshing = false;
      },
    );
  }

  /** Starts a lookup; its entry waits among the misses until the key is found. */
  private query(rawKey: string, id: string, now: number): Entry {
    // The entry expires ttlMs after the query started, so what it holds is never older than that.
    const principal = this.lookup(rawKey);
    const entry: Entry = { expiresAt: now + this.ttlMs, principal };
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
        if (!entry.dropped && entry.expiresAt > this.now()) put(this.hits, id, entry, this.maxEntries);
      },
      () => {
        if (this.misses.get(id) === entry) this.misses.delete(id);
      },
    );
    return entry;
  }

  /**
   * True when the key was found by a lookup within recentForMs (a day), even if its
   * cache entry has expired since. Only says the key was valid: a request with it is
   * still looked up (get) and refused once revoked; a lookup not finding it forgets it.
   */
  recentlyValid(rawKey: string): boolean {
    const at = this.recent.get(keyDigest(rawKey));
    return at !== undefined && this.now() - at < this.recentForMs;
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

/** Sets id last (newest), first dropping the oldest entries while the map is full. Entries go in about in expiry order, so the oldest are the expired ones. */
function put<V>(map: Map<string, V>, id: string, value: V, max: number): void {
  map.delete(id);
  for (const oldest of map.keys()) {
    if (map.size < max) break;
    map.delete(oldest);
  }
  map.set(id, value);
}
