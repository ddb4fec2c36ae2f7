// What the repositories' queries share: the list sorts by a record's timestamps, the
// store condition of a range filter, and the phases the team's records are in.
import type { Collection, Filter } from 'mongodb';

/** The list sorts by the record's timestamps (store/entity-properties.ts), each stored as it is sorted. */
export const TIMESTAMP_SORTS: { created_at: ['created_at']; updated_at: ['updated_at'] } = {
  created_at: ['created_at'],
  updated_at: ['updated_at'],
};

/** The ends of a range a list filters by; an end left undefined is open. */
export interface RangeEnds<T> {
  $gte?: T;
  $lte?: T;
  $lt?: T;
}

/** The store condition of a range: its ends but those left undefined. */
export const rangeOf = <T>(ends: RangeEnds<T>): RangeEnds<T> =>
  Object.fromEntries(Object.entries(ends).filter(([, v]) => v !== undefined));

/** Which of `phases` some of the team's records in `collection` are in. */
export async function phasesInUse<R extends { team_id: string; phase: string }>(
  collection: Collection<R>,
  teamId: string,
  phases: string[],
): Promise<string[]> {
  if (phases.length === 0) return [];
  // Not distinct: FerretDB 1.24 refuses its maxTimeMS, which every operation carries (store/time-budgets.ts).
  const rows = await collection
    .find<Pick<R, 'phase'>>({ team_id: teamId, phase: { $in: phases } } as Filter<R>, {
      projection: { _id: 0, phase: 1 },
    })
    .toArray();
  return [...new Set(rows.map((r) => r.phase))];
}
