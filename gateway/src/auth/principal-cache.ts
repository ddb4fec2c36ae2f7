// Key lookups cached for at most ttlMs, hits and misses alike: a revoked key stops
// working within that time. Concurrent lookups of one key share a single query.
import type { Principal } from '../domain/accounts.ts';
import { keyDigest } from '../domain/keys.ts';

interface Entry {
  expiresAt: number;
  principal: Promise<Principal | null>;
}

export interface PrincipalCacheOptions {
  lookup(rawKey: string): Promise<Principal | null>;
  ttlMs?: number;
  maxEntries?: number;
  now?: () => number;
}

export class PrincipalCache {
  private readonly entries = new Map<string, Entry>();
  private readonly lookup: PrincipalCacheOptions['lookup'];
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(opts: PrincipalCacheOptions) {
    this.lookup = opts.lookup;
    this.ttlMs = opts.ttlMs ?? 1000;
    this.maxEntries = opts.maxEntries ?? 10_000;
    this.now = opts.now ?? Date.now;
  }

  get(rawKey: string): Promise<Principal | null> {
    // Keyed by digest so raw keys are not kept in memory.
    const id = keyDigest(rawKey);
    const now = this.now();
    const hit = this.entries.get(id);
    if (hit && hit.expiresAt > now) return hit.principal;
    if (hit) this.entries.delete(id);
    // The entry expires ttlMs after the query started, so what it holds is never older than that.
    const principal = this.lookup(rawKey);
    this.makeRoom(now);
    this.entries.set(id, { expiresAt: now + this.ttlMs, principal });
    principal.catch(() => {
      if (this.entries.get(id)?.principal === principal) this.entries.delete(id);
    });
    return principal;
  }

  clear(): void {
    this.entries.clear();
  }

  private makeRoom(now: number): void {
    if (this.entries.size < this.maxEntries) return;
    for (const [id, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(id);
    // Still full (a flood of distinct keys): drop the oldest entries.
    for (const id of this.entries.keys()) {
      if (this.entries.size < this.maxEntries) break;
      this.entries.delete(id);
    }
  }
}
