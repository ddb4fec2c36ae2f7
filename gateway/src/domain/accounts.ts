// Teams, users and API keys: the use cases behind the operator CLI and the
// gateway's key lookup. No HTTP here.
import { badRequest, userNotFound } from '@lpm/shared/errors';
import { courtCalendarOf } from '@lpm/shared/court-calendar';
import { publicationSettingsOf, type PublicationSettings } from '@lpm/shared/publication-settings';
import { newId } from '@lpm/shared/ids';
import { canonicalTimeZone } from '@lpm/shared/time';
import {
  SCOPES,
  defaultTeamSettings,
  sameSecret,
  type Identity,
  type Scope,
  type TeamSettings,
} from '@lpm/shared/identity';
import type { ApiKeyRecord, TeamRecord, UserRecord } from '../data/entities.ts';
import type { GatewayRepositories } from '../data/store.ts';
import type { StoredTeam } from '../data/teams-repository.ts';
import { keyNotFound, teamNotFound } from '../contract/account-errors.ts';
import { generateApiKey, isWellFormedKey, keyDigest } from './keys.ts';
import { isPlan, type Plan } from '../contract/plans.ts';

/** A stored record as the domain sees it: `id` for the store's `_id`. */
type Identified<R extends { _id: string }> = Omit<R, '_id'> & { id: string };

/** A team with its settings; those never changed are the defaults. */
export type Team = Omit<
  Identified<TeamRecord>,
  'case_phases' | 'deal_phases' | 'court_calendar' | 'cnj_check' | 'portal_allowed_origins' | 'publications'
> &
  TeamSettings & { portal_allowed_origins: string[]; publications: PublicationSettings };

export type User = Identified<UserRecord>;

/** A key without its digest. */
export type ApiKey = Omit<Identified<ApiKeyRecord>, 'digest'>;

/** What a webhooks portal session allows: the /v1/webhooks routes until expiresAt (ms). */
export interface PortalGrant {
  sessionId: string;
  expiresAt: number;
}

export interface Principal {
  team: Team;
  user: User;
  key: ApiKey;
  /** Set when the credential is a portal session's token rather than an API key. */
  portal?: PortalGrant;
}

/** A team's settings, as services receive them. */
export function settingsOf(team: Team): TeamSettings {
  const { timezone, case_phases, deal_phases, court_calendar, cnj_check } = team;
  return { timezone, case_phases, deal_phases, court_calendar, cnj_check };
}

/** What the gateway tells services about a caller. */
export function identityOf(p: Principal): Identity {
  return { teamId: p.team.id, userId: p.user.id, scopes: p.key.scopes, settings: settingsOf(p.team) };
}

export interface IssuedKey {
  /** The raw key: shown once, never stored. */
  apiKey: string;
  key: ApiKey;
}

export interface CreateTeamInput {
  name: string;
  plan: string;
  timezone?: string;
  ownerName: string;
  ownerEmail: string;
}

export interface AccountsOptions extends GatewayRepositories {
  defaultTimezone?: string;
}

const MAX_NAME = 500;
const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DEFAULT_TIMEZONE = 'America/Sao_Paulo';

function requireName(field: string, value: string): string {
  const name = value.trim();
  if (!name) throw badRequest(`${field} is required`, { field, type: 'required' });
  if (name.length > MAX_NAME)
    throw badRequest(`${field} must be at most ${MAX_NAME} characters`, { field, type: 'invalid' });
  return name;
}

function requireEmail(value: string): string {
  const email = value.trim().toLowerCase();
  if (email.length > 254 || !EMAIL_RE.test(email))
    throw badRequest(`Invalid email: ${value}`, { field: 'email', type: 'invalid' });
  return email;
}

function requirePlan(value: string): Plan {
  if (!isPlan(value)) {
    throw badRequest(`Invalid plan: ${value} (expected starter, professional or enterprise)`, {
      field: 'plan',
      type: 'invalid',
    });
  }
  return value;
}

/** The zone as stored: its canonical name, whatever the spelling sent. */
function requireTimezone(value: string): string {
  const zone = canonicalTimeZone(value);
  if (!zone) throw badRequest(`Invalid time zone: ${value}`, { field: 'timezone', type: 'invalid' });
  return zone;
}

export function parseScopes(values: readonly string[]): Scope[] {
  const wanted = new Set(values.map((s) => s.trim()).filter(Boolean));
  if (wanted.size === 0) throw badRequest('scopes is required', { field: 'scopes', type: 'required' });
  for (const s of wanted) {
    if (!SCOPES.includes(s as Scope)) {
      throw badRequest(`Invalid scope: ${s} (expected read, write and/or admin)`, { field: 'scopes', type: 'invalid' });
    }
  }
  return SCOPES.filter((s) => wanted.has(s));
}

/** A team as stored; settings never changed read as the defaults. */
function toTeam(r: StoredTeam): Team {
  const defaults = defaultTeamSettings(r.timezone);
  return {
    id: r._id,
    name: r.name,
    plan: r.plan,
    // Stored as typed before zones were stored by their canonical name.
    timezone: canonicalTimeZone(r.timezone) ?? r.timezone,
    case_phases: r.case_phases ?? defaults.case_phases,
    deal_phases: r.deal_phases ?? defaults.deal_phases,
    court_calendar: courtCalendarOf(r.court_calendar),
    cnj_check: r.cnj_check ?? defaults.cnj_check,
    portal_allowed_origins: r.portal_allowed_origins ?? [],
    publications: publicationSettingsOf(r.publications),
    settings_updated_at: r.settings_updated_at ?? null,
    owner_user_id: r.owner_user_id,
    created_at: r.created_at,
  };
}

const toUser = (r: UserRecord): User => ({
  id: r._id,
  team_id: r.team_id,
  name: r.name,
  email: r.email,
  created_at: r.created_at,
});

const toKey = (r: ApiKeyRecord): ApiKey => ({
  id: r._id,
  team_id: r.team_id,
  user_id: r.user_id,
  scopes: r.scopes,
  created_at: r.created_at,
  revoked_at: r.revoked_at,
});

export class Accounts {
  private readonly store: Pick<GatewayRepositories, 'teams' | 'users' | 'keys'>;
  private readonly defaultTimezone: string;

  constructor(opts: AccountsOptions) {
    this.store = { teams: opts.teams, users: opts.users, keys: opts.keys };
    this.defaultTimezone = opts.defaultTimezone ?? DEFAULT_TIMEZONE;
  }

  /** A team, its owner and the owner's first key (read, write, admin). */
  async createTeam(input: CreateTeamInput): Promise<{ team: Team; user: User } & IssuedKey> {
    const name = requireName('name', input.name);
    const plan = requirePlan(input.plan);
    const timezone = requireTimezone(input.timezone ?? this.defaultTimezone);
    const ownerName = requireName('owner_name', input.ownerName);
    const ownerEmail = requireEmail(input.ownerEmail);
    const now = new Date();
    const team = { _id: newId('team'), name, plan, timezone, owner_user_id: newId('user'), created_at: now };
    const user: UserRecord = {
      _id: team.owner_user_id,
      team_id: team._id,
      name: ownerName,
      email: ownerEmail,
      created_at: now,
    };
    // No transactions on FerretDB: the user and key refer to the team, so the team goes first.
    await this.store.teams.insert(team);
    await this.store.users.insert(user);
    const issued = await this.issueKey(team._id, user._id, ['read', 'write', 'admin']);
    return { team: toTeam(team), user: toUser(user), ...issued };
  }

  async createUser(input: { teamId: string; name: string; email: string }): Promise<User> {
    const name = requireName('name', input.name);
    const email = requireEmail(input.email);
    await this.getTeam(input.teamId);
    const user: UserRecord = { _id: newId('user'), team_id: input.teamId, name, email, created_at: new Date() };
    await this.store.users.insert(user);
    return toUser(user);
  }

  async createKey(input: { teamId: string; userId: string; scopes: readonly string[] }): Promise<IssuedKey> {
    const scopes = parseScopes(input.scopes);
    await this.getTeam(input.teamId);
    if (!(await this.store.users.get(input.teamId, input.userId))) throw userNotFound();
    return this.issueKey(input.teamId, input.userId, scopes);
  }

  /**
   * Idempotent: revoking a revoked key keeps its first revocation time, and announces
   * the change to the gateways again (in case an earlier attempt failed after its write).
   */
  async revokeKey(keyId: string): Promise<ApiKey> {
    if (!(await this.store.keys.get(keyId))) throw keyNotFound();
    await this.store.keys.revoke(keyId, new Date());
    // Read back: a concurrent revocation may have set the time first.
    const after = await this.store.keys.get(keyId);
    if (!after) throw keyNotFound();
    return toKey(after);
  }

  async setPlan(teamId: string, planName: string): Promise<Team> {
    const plan = requirePlan(planName);
    await this.getTeam(teamId);
    await this.store.teams.setPlan(teamId, plan);
    return this.getTeam(teamId);
  }

  /** The teams that watch lawyers on the DJEN (the publications service polls for them). */
  async watchingTeams(): Promise<Team[]> {
    return (await this.store.teams.watching()).map(toTeam);
  }

  async getTeam(teamId: string): Promise<Team> {
    const team = await this.store.teams.get(teamId);
    if (!team) throw teamNotFound();
    return toTeam(team);
  }

  /** The team and the user of it, as a principal holds them; null when either is gone. */
  async teamAndUser(teamId: string, userId: string): Promise<{ team: Team; user: User } | null> {
    const [user, team] = await Promise.all([this.store.users.get(teamId, userId), this.store.teams.get(teamId)]);
    return user && team ? { team: toTeam(team), user: toUser(user) } : null;
  }

  /** The users of the team among ids; ids of no user of the team are left out. */
  async findUsers(teamId: string, ids: readonly string[]): Promise<User[]> {
    return (await this.store.users.findMany(teamId, ids)).map(toUser);
  }

  /** The team, user and key behind a raw key; null when it is malformed, unknown or revoked. */
  async authenticate(rawKey: string): Promise<Principal | null> {
    if (!isWellFormedKey(rawKey)) return null;
    const digest = keyDigest(rawKey);
    const key = await this.store.keys.findByDigest(digest);
    if (!key || key.revoked_at || !sameSecret(key.digest, digest)) return null;
    const [user, team] = await Promise.all([
      this.store.users.get(key.team_id, key.user_id),
      this.store.teams.get(key.team_id),
    ]);
    if (!user || !team) return null;
    return { team: toTeam(team), user: toUser(user), key: toKey(key) };
  }

  private async issueKey(teamId: string, userId: string, scopes: Scope[]): Promise<IssuedKey> {
    const apiKey = generateApiKey();
    const key: ApiKeyRecord = {
      _id: newId('key'),
      team_id: teamId,
      user_id: userId,
      scopes,
      created_at: new Date(),
      revoked_at: null,
      digest: keyDigest(apiKey),
    };
    await this.store.keys.insert(key);
    return { apiKey, key: toKey(key) };
  }
}
