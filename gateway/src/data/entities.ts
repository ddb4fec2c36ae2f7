// The gateway's own records: teams, their users and API keys (docs/decisions.md §6).
import { p, type InferEntity } from '@mikro-orm/mongodb';
import { idEntity, teamEntity } from '@lpm/shared/store/entities';
import type { Scope, TeamSettings } from '@lpm/shared/identity';
import { PLANS } from '../contract/plans.ts';
import { CNJ_CHECKS } from '@lpm/shared/court-calendar';
import type { PublicationSettings } from '@lpm/shared/publication-settings';

export const TeamEntity = idEntity('Team', 'teams', {
  properties: {
    name: p.string(),
    plan: p.enum(PLANS),
    timezone: p.string(),
    // Team settings (docs/decisions.md §8); absent until first changed, read as the defaults.
    case_phases: p.json<TeamSettings['case_phases']>().strictNullable(),
    deal_phases: p.json<TeamSettings['deal_phases']>().strictNullable(),
    court_calendar: p.json<TeamSettings['court_calendar']>().strictNullable(),
    cnj_check: p.enum(CNJ_CHECKS).strictNullable(),
    // The DJEN watches and deadline mode: not in the settings header, the publications service asks for them.
    publications: p.json<PublicationSettings>().strictNullable(),
    settings_updated_at: p.datetime().strictNullable(),
    // The origins that may embed the webhooks portal in a frame (CSP frame-ancestors); absent until first set.
    portal_allowed_origins: p.json<string[]>().strictNullable(),
    owner_user_id: p.string(),
    created_at: p.datetime(),
  },
});

export const UserEntity = teamEntity('User', 'users', {
  properties: {
    name: p.string(),
    email: p.string(),
    created_at: p.datetime(),
  },
  uniques: [{ properties: ['team_id', 'email'] }],
});

export const ApiKeyEntity = teamEntity('ApiKey', 'api_keys', {
  properties: {
    user_id: p.string(),
    scopes: p.json<Scope[]>(),
    // SHA-256 of the raw key, which is never stored.
    digest: p.string(),
    created_at: p.datetime(),
    revoked_at: p.datetime().strictNullable(),
  },
  uniques: [{ properties: ['digest'] }],
});

/**
 * A webhooks portal session: a credential of one team, good for /v1/webhooks/* only,
 * until it expires or is revoked. Only the digest of its token is stored.
 */
export const PortalSessionEntity = teamEntity('PortalSession', 'portal_sessions', {
  properties: {
    /** The user whose admin key opened it: the actor of what the portal does. */
    user_id: p.string(),
    digest: p.string(),
    created_at: p.datetime(),
    expires_at: p.datetime(),
    revoked_at: p.datetime().strictNullable(),
  },
  indexes: [{ properties: ['team_id'] }],
  uniques: [{ properties: ['digest'] }],
});

/**
 * A team whose court calendar or time zone changed and whose services have not all
 * applied it yet (domain/calendar-sync.ts): written before the settings, removed once
 * every service answered done for a change at least as recent.
 */
export const CalendarSyncEntity = idEntity('CalendarSync', 'calendar_syncs', {
  properties: {
    changed_at: p.datetime(),
    /** The user who made the change: the actor of the events it causes. */
    by: p.string(),
    /** When the retry pass tells or asks the services next (absent on records of older versions: changed_at). */
    next_at: p.datetime().strictNullable(),
    /** Failed tells in a row: the wait before the next doubles with each. */
    attempts: p.integer().strictNullable(),
    /** The parts of the settings changed and not yet applied, of this change and any it replaced (absent on records of older versions: both). */
    parts: p.array().$type<SyncPart[]>().strictNullable(),
  },
});

/** A part of a team's settings whose change the services apply to their records. */
export type SyncPart = 'court_calendar' | 'timezone';

export const GATEWAY_ENTITIES = [TeamEntity, UserEntity, ApiKeyEntity, PortalSessionEntity, CalendarSyncEntity];

export type TeamRecord = InferEntity<typeof TeamEntity>;
export type UserRecord = InferEntity<typeof UserEntity>;
export type ApiKeyRecord = InferEntity<typeof ApiKeyEntity>;
export type PortalSessionRecord = InferEntity<typeof PortalSessionEntity>;
export type CalendarSyncRecord = InferEntity<typeof CalendarSyncEntity>;
