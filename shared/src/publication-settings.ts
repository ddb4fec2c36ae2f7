// A team's publication settings as the gateway keeps and hands them over: the
// lawyers watched on the DJEN and what a publication's deadline becomes.
import type { TeamSettings } from '@lpm/shared/identity';

export const DEADLINE_MODES = ['off', 'suggest', 'create'] as const;
export type DeadlineMode = (typeof DEADLINE_MODES)[number];
export const DEADLINE_COUNTINGS = ['business', 'calendar'] as const;
export type DeadlineCounting = (typeof DEADLINE_COUNTINGS)[number];

export interface Watch {
  oab_number: string;
  oab_uf: string;
  name: string | null;
}

export interface DeadlineSettings {
  mode: DeadlineMode;
  days: number;
  counting: DeadlineCounting;
}

export interface PublicationSettings {
  watches: Watch[];
  deadline: DeadlineSettings;
  backfill_days: number;
}

export const DEFAULT_DEADLINE: DeadlineSettings = { mode: 'suggest', days: 15, counting: 'business' };
export const DEFAULT_BACKFILL_DAYS = 7;

/** One team as the poller sees it: its settings (the court calendar counts the dates) and its watches. */
export interface TeamWatches {
  team_id: string;
  settings: TeamSettings;
  publications: PublicationSettings;
}

/** A watching team as the gateway lists it for the publications service (GET /internal/publication-watches). */
export interface WatchedTeam extends TeamWatches {
  /** Whom the publications service acts for in other services (the team's owner). */
  user_id: string;
}

/** The key of one watch of a team: `<uf>:<number>`. */
export const watchKey = (w: Pick<Watch, 'oab_number' | 'oab_uf'>) => `${w.oab_uf}:${w.oab_number}`;

export const MAX_WATCHES = 50;
export const MAX_BACKFILL_DAYS = 60;

const isWatch = (w: unknown): w is Watch =>
  typeof w === 'object' &&
  w !== null &&
  typeof (w as Watch).oab_number === 'string' &&
  typeof (w as Watch).oab_uf === 'string';

/** A team's stored publication settings, each part absent or malformed read as its default. */
export function publicationSettingsOf(stored: unknown): PublicationSettings {
  const s = (typeof stored === 'object' && stored !== null ? stored : {}) as Partial<PublicationSettings>;
  const d = (typeof s.deadline === 'object' && s.deadline !== null ? s.deadline : {}) as Partial<DeadlineSettings>;
  return {
    watches: Array.isArray(s.watches)
      ? s.watches.filter(isWatch).map((w) => ({ oab_number: w.oab_number, oab_uf: w.oab_uf, name: w.name ?? null }))
      : [],
    deadline: {
      mode: DEADLINE_MODES.includes(d.mode as DeadlineMode) ? (d.mode as DeadlineMode) : DEFAULT_DEADLINE.mode,
      days: Number.isInteger(d.days) && d.days! >= 1 && d.days! <= 365 ? d.days! : DEFAULT_DEADLINE.days,
      counting: DEADLINE_COUNTINGS.includes(d.counting as DeadlineCounting)
        ? (d.counting as DeadlineCounting)
        : DEFAULT_DEADLINE.counting,
    },
    backfill_days:
      Number.isInteger(s.backfill_days) && s.backfill_days! >= 0 && s.backfill_days! <= MAX_BACKFILL_DAYS
        ? s.backfill_days!
        : DEFAULT_BACKFILL_DAYS,
  };
}
