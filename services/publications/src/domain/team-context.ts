// Whom the service acts as for a team in other services, and with which deadline settings.
import type { Identity } from '@lpm/shared/identity';
import {
  DEFAULT_BACKFILL_DAYS,
  DEFAULT_DEADLINE,
  type PublicationSettings,
  type WatchedTeam,
} from '@lpm/shared/publication-settings';
import type { PollRepository } from '../data/poll-repository.ts';

export interface TeamContext {
  who: Identity;
  publications: PublicationSettings;
}

export const contextOf = (t: WatchedTeam): TeamContext => ({
  who: { teamId: t.team_id, userId: t.user_id, scopes: ['read', 'write'], settings: t.settings },
  publications: t.publications,
});

/** The team as the last poll read it; without one, the defaults (no watches, mode suggest). */
export async function storedContext(
  poll: PollRepository,
  teamId: string,
  caller?: Identity,
): Promise<TeamContext | null> {
  const team = await poll.team(teamId);
  if (team) {
    const context = contextOf({
      team_id: teamId,
      user_id: team.user_id,
      settings: team.settings,
      publications: team.publications,
    });
    // A caller's own settings are the newest the service sees.
    return caller ? { ...context, who: { ...caller, scopes: ['read', 'write'] } } : context;
  }
  if (!caller) return null;
  return {
    who: caller,
    publications: { watches: [], deadline: DEFAULT_DEADLINE, backfill_days: DEFAULT_BACKFILL_DAYS },
  };
}
