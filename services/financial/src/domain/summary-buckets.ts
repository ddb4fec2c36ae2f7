// Calendar buckets of the summary (docs/decisions.md §5): months YYYY-MM, days YYYY-MM-DD,
// ISO weeks YYYY-Www (weeks start on Monday; week 1 holds the year's first
// Thursday, so 2026-12-31 is in 2026-W53 and 2027-01-01 too).
import { DAY_MS } from '@lpm/shared/time';
import type { GroupBy } from '../contract/financial-schemas.ts';

const utc = (date: string) => Date.parse(`${date}T00:00:00Z`);
const ymd = (t: number) => new Date(t).toISOString().slice(0, 10);

export function isoWeek(date: string): string {
  const t = utc(date);
  const weekday = (new Date(t).getUTCDay() + 6) % 7; // Monday 0 .. Sunday 6
  const thursday = new Date(t + (3 - weekday) * DAY_MS);
  const year = thursday.getUTCFullYear();
  const week = Math.floor((thursday.getTime() - Date.UTC(year, 0, 1)) / (7 * DAY_MS)) + 1;
  return `${year}-W${String(week).padStart(2, '0')}`;
}

export function bucketOf(groupBy: GroupBy, date: string): string {
  if (groupBy === 'month') return date.slice(0, 7);
  if (groupBy === 'week') return isoWeek(date);
  return date;
}

/** Every bucket touching from..to (inclusive), in order; null when more than `max`. */
export function bucketsBetween(groupBy: GroupBy, from: string, to: string, max: number): string[] | null {
  const out: string[] = [];
  const end = utc(to);
  let t = utc(from);
  if (groupBy === 'month') {
    const last = to.slice(0, 7);
    const d = new Date(t);
    for (let y = d.getUTCFullYear(), m = d.getUTCMonth(); ; m++) {
      const key = ymd(Date.UTC(y, m, 1)).slice(0, 7);
      if (key > last) break;
      if (out.length === max) return null;
      out.push(key);
    }
    return out;
  }
  if (groupBy === 'week') {
    const weekday = (new Date(t).getUTCDay() + 6) % 7;
    t -= weekday * DAY_MS; // the Monday of from's week
    for (; t <= end; t += 7 * DAY_MS) {
      if (out.length === max) return null;
      out.push(isoWeek(ymd(t)));
    }
    return out;
  }
  for (; t <= end; t += DAY_MS) {
    if (out.length === max) return null;
    out.push(ymd(t));
  }
  return out;
}
