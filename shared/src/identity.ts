// The caller's identity as the gateway forwards it to services. The gateway sets
// these headers itself and drops any a client sent; services trust them only
// together with the internal credential.
import { timingSafeEqual, createHash } from 'node:crypto';
import { courtCalendarOf, defaultCourtCalendar, type CnjCheck, type CourtCalendarSettings } from './court-calendar.ts';

export const HEADER = {
  internalToken: 'x-lpm-internal-token',
  teamId: 'x-lpm-team-id',
  userId: 'x-lpm-user-id',
  scopes: 'x-lpm-scopes',
  /** base64url of the team settings' JSON: phase names need not be ASCII, which header values must be. */
  settings: 'x-lpm-team-settings',
} as const;

export const IDENTITY_HEADER_NAMES: readonly string[] = Object.values(HEADER);

export type Scope = 'read' | 'write' | 'admin';
export const SCOPES: readonly Scope[] = ['read', 'write', 'admin'];

/** A team's settings (docs/decisions.md §8), owned by the gateway and sent with every request. */
export interface TeamSettings {
  timezone: string;
  case_phases: string[];
  deal_phases: { name: string; probability: number }[];
  /** The team's court: its jurisdiction and its own closures (deadline counting). */
  court_calendar: CourtCalendarSettings;
  /** What a case number in the CNJ format with wrong check digits gets: accepted with a warning, or 422. */
  cnj_check: CnjCheck;
}

export const DEFAULT_CASE_PHASES: readonly string[] = [
  'recebido',
  'triagem',
  'em-andamento',
  'em-revisão',
  'finalizado',
];
export const DEFAULT_DEAL_PHASES: readonly Readonly<TeamSettings['deal_phases'][number]>[] = [
  { name: 'lead', probability: 10 },
  { name: 'qualificado', probability: 25 },
  { name: 'proposta', probability: 50 },
  { name: 'negociacao', probability: 75 },
  { name: 'fechamento', probability: 90 },
];

export function defaultTeamSettings(timezone = 'America/Sao_Paulo'): TeamSettings {
  return {
    timezone,
    case_phases: [...DEFAULT_CASE_PHASES],
    deal_phases: DEFAULT_DEAL_PHASES.map((p) => ({ ...p })),
    court_calendar: defaultCourtCalendar(),
    cnj_check: 'warn',
  };
}

export interface Identity {
  teamId: string;
  userId: string;
  scopes: Scope[];
  settings: TeamSettings;
}

export function identityHeaders(identity: Identity, internalToken: string): Record<string, string> {
  const { timezone, case_phases, deal_phases, court_calendar, cnj_check } = identity.settings;
  return {
    [HEADER.internalToken]: internalToken,
    [HEADER.teamId]: identity.teamId,
    [HEADER.userId]: identity.userId,
    [HEADER.scopes]: identity.scopes.join(','),
    [HEADER.settings]: Buffer.from(
      JSON.stringify({ timezone, case_phases, deal_phases, court_calendar, cnj_check }),
    ).toString('base64url'),
  };
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Constant-time comparison of two secrets of any length. */
export function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

type Headers = Record<string, string | string[] | undefined>;

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/** The internal credential's digest, made once rather than on every request. */
let internal: { token: string; digest: Buffer } | undefined;

function isInternalToken(given: string, internalToken: string): boolean {
  if (internal?.token !== internalToken) internal = { token: internalToken, digest: digest(internalToken) };
  return timingSafeEqual(digest(given), internal.digest);
}

/**
 * Settings headers already read, by value: every request of a team carries the same
 * one, and reading it (base64, JSON, checks) was a few percent of a service's CPU on
 * a GET. Read only after the internal credential, so only the gateway fills it; the
 * oldest dropped first. Frozen: every request of the team shares them.
 */
const SETTINGS_KEPT = 512;
const settingsByHeader = new Map<string, TeamSettings>();

function settingsOf(raw: string | undefined): TeamSettings {
  if (!raw) return defaultTeamSettings();
  let settings = settingsByHeader.get(raw);
  if (!settings) {
    if (settingsByHeader.size >= SETTINGS_KEPT) settingsByHeader.delete(settingsByHeader.keys().next().value!);
    settingsByHeader.set(raw, (settings = deepFreeze(readSettings(raw))));
  }
  return settings;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** The identity in a request's headers, or null when the internal credential is missing or wrong. */
export function readIdentity(headers: Headers, internalToken: string): Identity | null {
  const token = one(headers[HEADER.internalToken]);
  if (!token || !isInternalToken(token, internalToken)) return null;
  const teamId = one(headers[HEADER.teamId]);
  const userId = one(headers[HEADER.userId]);
  if (!teamId || !userId) return null;
  const scopes = (one(headers[HEADER.scopes]) ?? '').split(',').filter((s): s is Scope => SCOPES.includes(s as Scope));
  return { teamId, userId, scopes, settings: settingsOf(one(headers[HEADER.settings])) };
}

/** The settings header's value; the defaults when it is malformed. */
function readSettings(raw: string): TeamSettings {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    return defaultTeamSettings();
  }
  if (!isTeamSettings(value)) return defaultTeamSettings();
  return {
    timezone: value.timezone,
    case_phases: value.case_phases,
    deal_phases: value.deal_phases.map(({ name, probability }) => ({ name, probability })),
    // Absent from a header an older gateway wrote, or a part of it: the defaults of that part.
    court_calendar: courtCalendarOf(value.court_calendar),
    cnj_check: value.cnj_check === 'reject' ? 'reject' : 'warn',
  };
}

function isTeamSettings(
  v: unknown,
): v is Omit<TeamSettings, 'court_calendar' | 'cnj_check'> & { court_calendar?: unknown; cnj_check?: CnjCheck } {
  const s = v as Partial<TeamSettings> | null;
  return (
    typeof s === 'object' &&
    s !== null &&
    typeof s.timezone === 'string' &&
    s.timezone !== '' &&
    Array.isArray(s.case_phases) &&
    s.case_phases.every((p) => typeof p === 'string') &&
    Array.isArray(s.deal_phases) &&
    s.deal_phases.every(
      (p) => typeof p === 'object' && p !== null && typeof p.name === 'string' && typeof p.probability === 'number',
    )
  );
}
