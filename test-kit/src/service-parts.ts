// Parts of a service's wiring that its tests build as the service's start does:
// the repository's lists, the team syncs of its internal routes, and no relay.
import type { Db } from 'mongodb';
import { TeamSyncs, type TeamSyncsOptions } from '@lpm/shared/jobs/team-syncs';
import type { Relay } from '@lpm/shared/store/record-store-types';
import { quietLogger } from './wait.ts';

/** A relay that drops its nudges: no outbox relay runs in the test. */
export const NO_RELAY: Relay = { kick: () => {} };

/**
 * No relay either, but writes store their events under a mark, as they do beside the
 * service's relay (outbox/marks.ts): one JSON string, where NO_RELAY leaves each
 * document its nested outbox array, which the local store decodes on every read of it.
 * For suites whose events are large (a publication's carries its deadline's every day).
 */
export const NO_RELAY_MARKED: Relay = {
  kick: () => {},
  marks: {
    take: async () => ({ mark: 'test:0', stored: () => {}, refused: () => {}, failed: () => {} }),
    settled: async () => true,
  },
};

/** `repository` with its lists backfilled, as the service's start does: on a new database that only marks them ready. */
export async function withListsReady<R extends { lists: { backfill(): Promise<unknown> } }>(repository: R): Promise<R> {
  await repository.lists.backfill();
  return repository;
}

/** The team syncs of the service's internal routes, started, with the test's own pass every 100 ms unless `options` say otherwise. */
export async function startTeamSyncs(
  db: Db,
  work: TeamSyncsOptions['work'],
  options: Partial<TeamSyncsOptions> = {},
): Promise<TeamSyncs> {
  const syncs = new TeamSyncs({ db, logger: quietLogger, work, passMs: 100, ...options });
  await syncs.start();
  return syncs;
}
