// Webhooks portal sessions: a short-lived credential of one team that a team's admin
// opens with an API key and hands to a browser. Its token is good for the
// /v1/webhooks routes only (routes/access.ts refuses it elsewhere), as the admin who
// opened it, until it expires or is revoked; only its digest is stored.
import { newId } from '@lpm/shared/ids';
import { sameSecret } from '@lpm/shared/identity';
import type { PortalSessionsRepository } from '../data/portal-sessions-repository.ts';
import type { PortalSessionRecord } from '../data/entities.ts';
import {
  DEFAULT_PORTAL_MINUTES,
  type OpenPortalSessionBody,
  type PortalSessionOpened,
  type PortalSessionRevoked,
} from '../contract/portal-schemas.ts';
import { portalSessionNotFound, portalTokenRefused } from '../contract/portal-errors.ts';
import type { Accounts, Principal } from './accounts.ts';
import { generatePortalToken, isPortalToken, keyDigest } from './keys.ts';

const MINUTE = 60_000;

export interface PortalSessionsOptions {
  sessions: PortalSessionsRepository;
  accounts: Accounts;
  now?: () => number;
}

export class PortalSessions {
  private readonly sessions: PortalSessionsRepository;
  private readonly accounts: Accounts;
  private readonly now: () => number;

  constructor(opts: PortalSessionsOptions) {
    this.sessions = opts.sessions;
    this.accounts = opts.accounts;
    this.now = opts.now ?? Date.now;
  }

  /** A new session of the caller's team and user; `origin` is where the gateway is reached (the page's URL starts there). */
  async open(who: Principal, body: OpenPortalSessionBody, origin: string): Promise<PortalSessionOpened> {
    // A session cannot open another: it would outlive its own expiry.
    if (who.portal) throw portalTokenRefused();
    const token = generatePortalToken();
    const now = this.now();
    const record: PortalSessionRecord = {
      _id: newId('psn'),
      team_id: who.team.id,
      user_id: who.user.id,
      digest: keyDigest(token),
      created_at: new Date(now),
      expires_at: new Date(now + (body.expires_in_minutes ?? DEFAULT_PORTAL_MINUTES) * MINUTE),
      revoked_at: null,
    };
    await this.sessions.insert(record);
    const url = `${origin}/portal?session=${record._id}#token=${token}`;
    return { id: record._id, url, token, expires_at: record.expires_at.toISOString() };
  }

  async revoke(who: Principal, id: string): Promise<PortalSessionRevoked> {
    if (who.portal) throw portalTokenRefused();
    if (!(await this.sessions.get(who.team.id, id))) throw portalSessionNotFound();
    await this.sessions.revoke(who.team.id, id, new Date(this.now()));
    // Read back: a concurrent revocation may have set the time first.
    const after = await this.sessions.get(who.team.id, id);
    if (!after?.revoked_at) throw portalSessionNotFound();
    return { id, revoked_at: after.revoked_at.toISOString() };
  }

  /** The principal of a live session's token; null when it is malformed, unknown, expired or revoked. */
  async authenticate(token: string): Promise<Principal | null> {
    if (!isPortalToken(token)) return null;
    const digest = keyDigest(token);
    const session = await this.sessions.findByDigest(digest);
    if (!session || !live(session, this.now()) || !sameSecret(session.digest, digest)) return null;
    const found = await this.accounts.teamAndUser(session.team_id, session.user_id);
    if (!found) return null;
    const key = {
      id: session._id,
      team_id: session.team_id,
      user_id: session.user_id,
      scopes: ['read' as const, 'write' as const, 'admin' as const],
      created_at: session.created_at,
      revoked_at: null,
    };
    return { ...found, key, portal: { sessionId: session._id, expiresAt: session.expires_at.getTime() } };
  }

  /** The origins that may frame the portal page of a live session (its team's setting); none for any other id. */
  async frameAncestors(sessionId: string): Promise<string[]> {
    const session = await this.sessions.byId(sessionId);
    if (!session || !live(session, this.now())) return [];
    return (await this.accounts.getTeam(session.team_id).catch(() => null))?.portal_allowed_origins ?? [];
  }
}

const live = (s: PortalSessionRecord, now: number) => s.revoked_at === null && s.expires_at.getTime() > now;
