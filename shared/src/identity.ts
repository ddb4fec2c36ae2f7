// The caller's identity as the gateway forwards it to services. The gateway sets
// these headers itself and drops any a client sent; services trust them only
// together with the internal credential.
import { timingSafeEqual, createHash } from 'node:crypto';

export const HEADER = {
  internalToken: 'x-lpm-internal-token',
  teamId: 'x-lpm-team-id',
  userId: 'x-lpm-user-id',
  scopes: 'x-lpm-scopes',
  timezone: 'x-lpm-team-timezone',
} as const;

export const IDENTITY_HEADER_NAMES: readonly string[] = Object.values(HEADER);

export type Scope = 'read' | 'write' | 'admin';
export const SCOPES: readonly Scope[] = ['read', 'write', 'admin'];

export interface Identity {
  teamId: string;
  userId: string;
  scopes: Scope[];
  timezone: string;
}

export function identityHeaders(identity: Identity, internalToken: string): Record<string, string> {
  return {
    [HEADER.internalToken]: internalToken,
    [HEADER.teamId]: identity.teamId,
    [HEADER.userId]: identity.userId,
    [HEADER.scopes]: identity.scopes.join(','),
    [HEADER.timezone]: identity.timezone,
  };
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Constant-time comparison of two secrets of any length. */
export function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

type Headers = Record<string, string | string[] | undefined>;

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/** The identity in a request's headers, or null when the internal credential is missing or wrong. */
export function readIdentity(headers: Headers, internalToken: string): Identity | null {
  const token = one(headers[HEADER.internalToken]);
  if (!token || !sameSecret(token, internalToken)) return null;
  const teamId = one(headers[HEADER.teamId]);
  const userId = one(headers[HEADER.userId]);
  if (!teamId || !userId) return null;
  const scopes = (one(headers[HEADER.scopes]) ?? '').split(',').filter((s): s is Scope => SCOPES.includes(s as Scope));
  return { teamId, userId, scopes, timezone: one(headers[HEADER.timezone]) || 'America/Sao_Paulo' };
}
