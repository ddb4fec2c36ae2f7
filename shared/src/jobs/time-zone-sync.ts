// The team sync (team-syncs.ts) a record store runs when its team's time zone
// changes: the records whose moments follow the zone computed again in the new one.
import type { RecordStore } from '../store/record-store.ts';
import type { OwnedRecord } from '../store/record-store-types.ts';
import type { TeamSyncWork } from './team-syncs.ts';

/**
 * The time-zone sync of the records of `store` that `filter` selects: each one's
 * `moments` in the team's new zone, as of the instant `now` gives when a page is rewritten.
 */
export function timeZoneSync<R extends OwnedRecord>(
  store: Pick<RecordStore<R>, 'readUnmarked' | 'rewriteMoments' | 'recountDays'>,
  filter: Partial<R>,
  moments: (record: R, timezone: string, now: Date) => Partial<R>,
  now: () => Date = () => new Date(),
): TeamSyncWork<R> {
  return {
    read: (teamId, mark, limit) => store.readUnmarked(teamId, filter, mark, limit),
    rewrite: (who, _changedAt, records, mark) => {
      const at = now();
      return store.rewriteMoments(records, (r) => moments(r, who.settings.timezone, at), mark);
    },
    recount: (teamId, days) => store.recountDays(teamId, days),
    same: (done, next) => done.timezone === next.timezone,
  };
}
