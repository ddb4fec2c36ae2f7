// Key lookups cached for at most ttlMs, hits and misses alike: a revoked key stops
// working within that time. Concurrent lookups of one key share a single query.
// A team's entries can be dropped at once, when its settings change.
import type { Principal } from '../domain/accounts.ts';
import { keyDigest } from '../domain/keys.ts';

interface Entry {
  expiresAt: number;
  principal: Promise<Principal | null>;
  /** Set once the lookup has found a principal. */
  teamId?: string;
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
    const entry: Entry = { expiresAt: now + this.ttlMs, principal };
    this.entries.set(id, entry);
    principal.then(
      (found) => {
        if (found) entry.teamId = found.team.id;
      },
      () => {
        if (this.entries.get(id) === entry) this.entries.delete(id);
      },
    );
    return principal;
  }

  /** Drops every entry not known to be another team's: a lookup still running may have read the team before a change. */
  forgetTeam(teamId: string): void {
    for (const [id, entry] of this.entries) if (entry.teamId === undefined || entry.teamId === teamId) this.entries.delete(id);
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
