// Teams and calendar days as the services' tests name them.
import { defaultTeamSettings, type Identity } from '@lpm/shared/identity';
import { newId } from '@lpm/shared/ids';
import { DAY_MS, dayIn } from '@lpm/shared/time';

/** The zone of a team whose settings were never changed. */
export const TEAM_ZONE = 'America/Sao_Paulo';

/** A new team with one user, in `timezone`. */
export function identity(timezone = TEAM_ZONE, scopes: Identity['scopes'] = ['read', 'write', 'admin']): Identity {
  return { teamId: newId('team'), userId: newId('user'), scopes, settings: defaultTeamSettings(timezone) };
}

/**
 * The calendar day (YYYY-MM-DD) `offset` days after `from`: a day, or an instant
 * read in `zone` (by default, today in the default team zone).
 */
export function day(offset: number, from: Date | string = new Date(), zone = TEAM_ZONE): string {
  const start = typeof from === 'string' ? from : dayIn(zone, from);
  return new Date(Date.parse(`${start}T12:00:00Z`) + offset * DAY_MS).toISOString().slice(0, 10);
}
