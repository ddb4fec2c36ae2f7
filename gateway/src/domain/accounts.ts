// Teams, users and API keys: the use cases behind the operator CLI and the
// gateway's key lookup. No HTTP here.
import type { EntityManager } from '@mikro-orm/mongodb';
import { badRequest, conflict, notFound } from '@lpm/shared/errors';
import { newId } from '@lpm/shared/ids';
import { type Orm } from '@lpm/shared/store/orm';
import { isDuplicateKey } from '@lpm/shared/store/duplicate-key';
import { SCOPES, defaultTeamSettings, sameSecret, type Identity, type Scope, type TeamSettings } from '@lpm/shared/identity';
import { ApiKeyEntity, TeamEntity, UserEntity } from '../data/entities.ts';
import { generateApiKey, isWellFormedKey, keyDigest } from './keys.ts';
import { isPlan, type Plan } from './plans.ts';

export interface Team {
  id: string;
  name: string;
  plan: Plan;
  timezone: string;
  case_phases: string[];
  deal_phases: TeamSettings['deal_phases'];
  /** When the settings were last changed; null if never. */
  settings_updated_at: Date | null;
  owner_user_id: string;
  created_at: Date;
}

export interface User {
  id: string;
  team_id: string;
  name: string;
  email: string;
  created_at: Date;
}

export interface ApiKey {
  id: string;
  team_id: string;
  user_id: string;
  scopes: Scope[];
  created_at: Date;
  revoked_at: Date | null;
}

export interface Principal {
  team: Team;
  user: User;
  key: ApiKey;
}

/** What the gateway tells services about a caller. */
export function identityOf(p: Principal): Identity {
  const { timezone, case_phases, deal_phases } = p.team;
  return { teamId: p.team.id, userId: p.user.id, scopes: p.key.scopes, settings: { timezone, case_phases, deal_phases } };
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

export interface AccountsOptions {
  orm: Orm;
  defaultTimezone?: string;
}

const MAX_NAME = 500;
const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DEFAULT_TIMEZONE = 'America/Sao_Paulo';

function requireName(field: string, value: string): string {
  const name = value.trim();
  if (!name) throw badRequest(`${field} is required`, { field, type: 'required' });
  if (name.length > MAX_NAME) throw badRequest(`${field} must be at most ${MAX_NAME} characters`, { field, type: 'invalid' });
  return name;
}

function requireEmail(value: string): string {
  const email = value.trim().toLowerCase();
  if (email.length > 254 || !EMAIL_RE.test(email)) throw badRequest(`Invalid email: ${value}`, { field: 'email', type: 'invalid' });
  return email;
}

function requirePlan(value: string): Plan {
  if (!isPlan(value)) {
    throw badRequest(`Invalid plan: ${value} (expected starter, professional or enterprise)`, { field: 'plan', type: 'invalid' });
  }
  return value;
}

/** An IANA time zone name (Intl also takes UTC offsets such as +03:00, which are not). */
export function isTimeZone(tz: string): boolean {
  if (/^[+-]/.test(tz)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

function requireTimezone(value: string): string {
  if (!isTimeZone(value)) throw badRequest(`Invalid time zone: ${value}`, { field: 'timezone', type: 'invalid' });
  return value;
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

type Row = Record<string, unknown> & { _id: string };

const toTeam = (r: Row): Team => ({
  id: r._id,
  name: r.name as string,
  plan: r.plan as Plan,
  ...storedSettings(r),
  settings_updated_at: (r.settings_updated_at as Date | null | undefined) ?? null,
  owner_user_id: r.owner_user_id as string,
  created_at: r.created_at as Date,
});

/** A team's settings as stored; those never changed read as the defaults. */
function storedSettings(r: Row): TeamSettings {
  const defaults = defaultTeamSettings(r.timezone as string);
  return {
    timezone: r.timezone as string,
    case_phases: (r.case_phases as string[] | null | undefined) ?? defaults.case_phases,
    deal_phases: (r.deal_phases as TeamSettings['deal_phases'] | null | undefined) ?? defaults.deal_phases,
  };
}

const toUser = (r: Row): User => ({
  id: r._id,
  team_id: r.team_id as string,
  name: r.name as string,
  email: r.email as string,
  created_at: r.created_at as Date,
});

const toKey = (r: Row): ApiKey => ({
  id: r._id,
  team_id: r.team_id as string,
  user_id: r.user_id as string,
  scopes: r.scopes as Scope[],
  created_at: r.created_at as Date,
  revoked_at: (r.revoked_at as Date | null | undefined) ?? null,
});

export class Accounts {
  private readonly orm: Orm;
  private readonly defaultTimezone: string;

  constructor(opts: AccountsOptions) {
    this.orm = opts.orm;
    this.defaultTimezone = opts.defaultTimezone ?? DEFAULT_TIMEZONE;
  }

  private em(): EntityManager {
    return this.orm.em.fork() as EntityManager;
  }

  /** A team, its owner and the owner's first key (read, write, admin). */
  async createTeam(input: CreateTeamInput): Promise<{ team: Team; user: User } & IssuedKey> {
    const name = requireName('name', input.name);
    const plan = requirePlan(input.plan);
    const timezone = requireTimezone(input.timezone ?? this.defaultTimezone);
    const ownerName = requireName('owner_name', input.ownerName);
    const ownerEmail = requireEmail(input.ownerEmail);
    const now = new Date();
    const team: Team = {
      id: newId('team'),
      name,
      plan,
      ...defaultTeamSettings(timezone),
      settings_updated_at: null,
      owner_user_id: newId('user'),
      created_at: now,
    };
    const user: User = { id: team.owner_user_id, team_id: team.id, name: ownerName, email: ownerEmail, created_at: now };
    const em = this.em();
    // No transactions on FerretDB: the user and key refer to the team, so the team goes first.
    await em.insert(TeamEntity, { _id: team.id, name, plan, timezone, owner_user_id: user.id, created_at: now });
    await em.insert(UserEntity, { _id: user.id, team_id: team.id, name: ownerName, email: ownerEmail, created_at: now });
    const issued = await this.issueKey(em, team.id, user.id, ['read', 'write', 'admin']);
    return { team, user, ...issued };
  }

  async createUser(input: { teamId: string; name: string; email: string }): Promise<User> {
    const name = requireName('name', input.name);
    const email = requireEmail(input.email);
    const em = this.em();
    await this.findTeam(em, input.teamId);
    const user: User = { id: newId('user'), team_id: input.teamId, name, email, created_at: new Date() };
    try {
      await em.insert(UserEntity, { _id: user.id, team_id: user.team_id, name, email, created_at: user.created_at });
    } catch (e) {
      if (isDuplicateKey(e)) throw conflict('Email already registered in this team', 'duplicate_email');
      throw e;
    }
    return user;
  }

  async createKey(input: { teamId: string; userId: string; scopes: readonly string[] }): Promise<IssuedKey> {
    const scopes = parseScopes(input.scopes);
    const em = this.em();
    await this.findTeam(em, input.teamId);
    const user = await em.findOne(UserEntity, { _id: input.userId, team_id: input.teamId });
    if (!user) throw notFound('User not found');
    return this.issueKey(em, input.teamId, input.userId, scopes);
  }

  /** Idempotent: revoking a revoked key keeps its first revocation time. */
  async revokeKey(keyId: string): Promise<ApiKey> {
    const em = this.em();
    const found = await em.findOne(ApiKeyEntity, { _id: keyId });
    if (!found) throw notFound('Key not found');
    if (!found.revoked_at) {
      const revokedAt = new Date();
      await em.nativeUpdate(ApiKeyEntity, { _id: keyId, revoked_at: null }, { revoked_at: revokedAt });
      const after = await em.fork().findOne(ApiKeyEntity, { _id: keyId });
      return toKey(after as unknown as Row);
    }
    return toKey(found as unknown as Row);
  }

  async setPlan(teamId: string, planName: string): Promise<Team> {
    const plan = requirePlan(planName);
    const em = this.em();
    await this.findTeam(em, teamId);
    await em.nativeUpdate(TeamEntity, { _id: teamId }, { plan });
    return this.findTeam(em.fork(), teamId);
  }

  async getTeam(teamId: string): Promise<Team> {
    return this.findTeam(this.em(), teamId);
  }

  /** The users of the team among ids; ids of no user of the team are left out. */
  async findUsers(teamId: string, ids: readonly string[]): Promise<User[]> {
    const rows = await this.em().find(UserEntity, { team_id: teamId, _id: { $in: [...ids] } });
    return rows.map((r) => toUser(r as unknown as Row));
  }

  /** The team, user and key behind a raw key; null when it is malformed, unknown or revoked. */
  async authenticate(rawKey: string): Promise<Principal | null> {
    if (!isWellFormedKey(rawKey)) return null;
    const digest = keyDigest(rawKey);
    const em = this.em();
    const key = (await em.findOne(ApiKeyEntity, { digest })) as unknown as (Row & { digest: string }) | null;
    if (!key || key.revoked_at || !sameSecret(key.digest, digest)) return null;
    const [user, team] = await Promise.all([
      em.findOne(UserEntity, { _id: key.user_id as string, team_id: key.team_id as string }),
      em.findOne(TeamEntity, { _id: key.team_id as string }),
    ]);
    if (!user || !team) return null;
    return { team: toTeam(team as unknown as Row), user: toUser(user as unknown as Row), key: toKey(key) };
  }

  private async findTeam(em: EntityManager, teamId: string): Promise<Team> {
    const team = await em.findOne(TeamEntity, { _id: teamId });
    if (!team) throw notFound('Team not found');
    return toTeam(team as unknown as Row);
  }

  private async issueKey(em: EntityManager, teamId: string, userId: string, scopes: Scope[]): Promise<IssuedKey> {
    const apiKey = generateApiKey();
    const key: ApiKey = { id: newId('key'), team_id: teamId, user_id: userId, scopes, created_at: new Date(), revoked_at: null };
    await em.insert(ApiKeyEntity, { ...keyRow(key), digest: keyDigest(apiKey) });
    return { apiKey, key };
  }
}

const keyRow = (k: ApiKey) => ({
  _id: k.id,
  team_id: k.team_id,
  user_id: k.user_id,
  scopes: k.scopes,
  created_at: k.created_at,
  revoked_at: k.revoked_at,
});
