// The users of a team, which the gateway owns: services ask its /internal/users
// to check a responsible_id and to show names and e-mails, and its
// /internal/team-owner for whom to alert. Found users are cached (users cannot be
// renamed); ids not found are asked again each time, so a user created a moment
// ago is found.
import { serviceUnavailable } from '../errors.ts';
import { isId } from '../ids.ts';
import { ServiceClient } from './service-client.ts';

export interface DirectoryUser {
  id: string;
  name: string;
  email: string;
}

export interface UserDirectoryOptions {
  gatewayUrl: string;
  internalToken: string;
  timeoutMs?: number;
  cacheTtlMs?: number;
}

/** The most ids /internal/users takes in one request. */
const BATCH = 100;
const MAX_CACHED = 10_000;

interface Cached {
  user: DirectoryUser;
  expiresAt: number;
}

export class UserDirectory {
  private readonly gateway: ServiceClient;
  private readonly cacheTtlMs: number;
  private readonly cache = new Map<string, Cached>();

  constructor(opts: UserDirectoryOptions) {
    this.gateway = new ServiceClient({
      name: 'gateway',
      baseUrl: opts.gatewayUrl,
      internalToken: opts.internalToken,
      timeoutMs: opts.timeoutMs ?? 2000,
    });
    this.cacheTtlMs = opts.cacheTtlMs ?? 30_000;
  }

  /** The users of the team among ids; ids of no user of the team are absent. */
  async find(teamId: string, ids: string[]): Promise<Map<string, DirectoryUser>> {
    const found = new Map<string, DirectoryUser>();
    const missing: string[] = [];
    const now = Date.now();
    // Anything not shaped like a user id names no user, and must not reach the query string.
    for (const id of new Set(ids.filter((id) => isId('user', id)))) {
      const hit = this.cache.get(cacheKey(teamId, id));
      if (hit && hit.expiresAt > now) found.set(id, hit.user);
      else missing.push(id);
    }
    const batches: string[][] = [];
    for (let i = 0; i < missing.length; i += BATCH) batches.push(missing.slice(i, i + BATCH));
    const fetched = await Promise.all(batches.map((batch) => this.fetchUsers(teamId, batch)));
    const expiresAt = Date.now() + this.cacheTtlMs;
    for (const user of fetched.flat()) {
      this.remember(cacheKey(teamId, user.id), { user, expiresAt });
      found.set(user.id, user);
    }
    return found;
  }

  /** The team's owner; null when the gateway knows no such team. Not cached: it is asked for rarely (alerts). */
  async owner(teamId: string): Promise<DirectoryUser | null> {
    if (!isId('team', teamId)) return null;
    const res = await this.gateway.request<{ data?: Partial<DirectoryUser>; error?: { message?: string } } | null>(
      { teamId },
      'GET',
      '/internal/team-owner',
    );
    const { status, body } = res;
    // "Route not found" is the gateway refusing the internal token: a misconfiguration, not a missing team.
    if (status === 404 && body?.error?.message !== 'Route not found') return null;
    const u = body?.data;
    if (status !== 200 || typeof u?.id !== 'string' || typeof u.name !== 'string' || typeof u.email !== 'string') {
      throw serviceUnavailable('Service unavailable', {
        cause: new Error(`GET /internal/team-owner answered ${status}`),
      });
    }
    return { id: u.id, name: u.name, email: u.email };
  }

  private async fetchUsers(teamId: string, ids: string[]): Promise<DirectoryUser[]> {
    const res = await this.gateway.request<{ data?: unknown } | null>(
      { teamId },
      'GET',
      `/internal/users?${new URLSearchParams({ ids: ids.join(',') }).toString()}`,
    );
    const data = res.body?.data;
    if (res.status !== 200 || !Array.isArray(data)) {
      throw serviceUnavailable('Service unavailable', {
        cause: new Error(`GET /internal/users answered ${res.status}`),
      });
    }
    const wanted = new Set(ids);
    return (data as DirectoryUser[])
      .filter((u) => wanted.has(u.id))
      .map(({ id, name, email }) => ({ id, name, email }));
  }

  private remember(key: string, entry: Cached): void {
    this.cache.delete(key);
    if (this.cache.size >= MAX_CACHED) {
      const now = Date.now();
      for (const [k, e] of this.cache) if (e.expiresAt <= now) this.cache.delete(k);
      // Still full: the oldest entries go first (a Map iterates in insertion order).
      for (const k of this.cache.keys()) {
        if (this.cache.size < MAX_CACHED) break;
        this.cache.delete(k);
      }
    }
    this.cache.set(key, entry);
  }
}

const cacheKey = (teamId: string, userId: string) => `${teamId}\n${userId}`;
