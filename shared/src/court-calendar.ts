// A team's court calendar and CNJ-number policy (team settings): the
// shapes the gateway stores and validates and the services read from the settings
// header. The calendar itself is computed by the activities service.
import { arrayOf, date, enumOf, nullable, object, typed } from './http/schemas.ts';

/**
 * The 27 federative units (26 states and the Federal District) in the order of the
 * CNJ unified numbering (Resolução CNJ 65/2008, Anexo VIII), alphabetical by name: a
 * state-based court's TR code is its unit's place here, from 1.
 */
export const UFS_IN_CNJ_ORDER = [
  'AC',
  'AL',
  'AP',
  'AM',
  'BA',
  'CE',
  'DF',
  'ES',
  'GO',
  'MA',
  'MT',
  'MS',
  'MG',
  'PA',
  'PB',
  'PR',
  'PE',
  'PI',
  'RJ',
  'RN',
  'RS',
  'RO',
  'RR',
  'SC',
  'SE',
  'SP',
  'TO',
] as const;
export type Uf = (typeof UFS_IN_CNJ_ORDER)[number];

/** The units in alphabetical order of their codes. */
export const UFS: readonly Uf[] = [...UFS_IN_CNJ_ORDER].sort();

export const COURT_BRANCHES = ['state', 'federal', 'labour'] as const;
export type CourtBranch = (typeof COURT_BRANCHES)[number];

export interface Jurisdiction {
  uf: Uf | null;
  branch: CourtBranch;
}

/** A day the team's court had no business: a municipal holiday, a closure, its system down (CPC art. 224 §1). */
export interface Closure {
  date: string;
  name: string;
}

export interface CourtCalendarSettings {
  jurisdiction: Jurisdiction;
  closures: Closure[];
}

export const CNJ_CHECKS = ['warn', 'reject'] as const;
export type CnjCheck = (typeof CNJ_CHECKS)[number];

/** `{ uf, branch }` as a request names it (both optional: no UF, a state court). */
export const jurisdictionSchema = () =>
  object({ uf: nullable(enumOf(UFS, 'Invalid uf')), branch: enumOf(COURT_BRANCHES, 'Invalid branch') });

/** A team's closures as a request sends them: at most `max`, each a date and a name. */
export const closuresSchema = (max: number) =>
  arrayOf(
    object({ date: date(), name: typed<string>({ type: 'string', minLength: 1, maxLength: 100 }) }, ['date', 'name']),
    {
      maxItems: max,
      'x-message': `court_calendar.closures must be a list of at most ${max} closures`,
    },
  );

/** A team that never named a jurisdiction: the national calendar only (no state's holidays), as a state court counts it. */
export const DEFAULT_JURISDICTION: Jurisdiction = { uf: null, branch: 'state' };

export const defaultCourtCalendar = (): CourtCalendarSettings => ({
  jurisdiction: { ...DEFAULT_JURISDICTION },
  closures: [],
});

const isJurisdiction = (j: unknown): j is Jurisdiction => {
  const v = j as Partial<Jurisdiction> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    (v.uf === null || UFS.includes(v.uf as Uf)) &&
    COURT_BRANCHES.includes(v.branch as CourtBranch)
  );
};

const isClosures = (c: unknown): c is Closure[] =>
  Array.isArray(c) &&
  c.every(
    (x: Partial<Closure> | null) =>
      typeof x === 'object' && x !== null && typeof x.date === 'string' && typeof x.name === 'string',
  );

/**
 * A calendar as stored or sent, read part by part: a jurisdiction that is missing (or
 * not one) counts the national calendar only, and missing closures are none; the
 * other part keeps its value.
 */
export function courtCalendarOf(c: unknown): CourtCalendarSettings {
  const v = (typeof c === 'object' && c !== null ? c : {}) as Partial<Record<keyof CourtCalendarSettings, unknown>>;
  return {
    jurisdiction: isJurisdiction(v.jurisdiction) ? v.jurisdiction : { ...DEFAULT_JURISDICTION },
    closures: isClosures(v.closures) ? v.closures : [],
  };
}
