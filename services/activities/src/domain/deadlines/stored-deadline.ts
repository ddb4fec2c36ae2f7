// How an activity keeps what its rule computed. The trail (one entry a calendar day,
// 20 to 90 of them) is kept as one string: as nested documents it made a rule-based
// activity about 12 KB in the local store, and a court calendar change, which
// rewrites every open one of a team, spent most of its time there (docs/ferretdb.md).
// The string is JSON: the first day's date, then each day's reason, null for a day
// that counted; the days run one after another, as the calculator makes them.
// Activities stored before it keep the trail as entries, read as they are.
import { nextDay } from '@lpm/shared/time';
import type { Deadline, StoredDeadline, TrailDay } from '../../data/activity-entity.ts';

/** The trail in its stored form, or as it is when its days do not follow the calculator's pattern. */
function packTrail(trail: TrailDay[]): string | TrailDay[] {
  if (trail.length === 0) return trail;
  const reasons: (string | null)[] = [];
  let expected = trail[0].date;
  for (const day of trail) {
    if (day.date !== expected || day.counted !== (day.reason === null)) return trail;
    reasons.push(day.reason);
    expected = nextDay(day.date);
  }
  return JSON.stringify([trail[0].date, ...reasons]);
}

function unpackTrail(stored: string | TrailDay[]): TrailDay[] {
  if (typeof stored !== 'string') return stored;
  const [first, ...reasons] = JSON.parse(stored) as [string, ...(string | null)[]];
  let date = first;
  return reasons.map((reason, i) => {
    if (i > 0) date = nextDay(date);
    return { date, counted: reason === null, reason };
  });
}

export function storedDeadline(d: Deadline): StoredDeadline {
  return { ...d, trail: packTrail(d.trail) };
}

export function deadlineView(s: StoredDeadline): Deadline {
  return { ...s, trail: unpackTrail(s.trail) };
}
