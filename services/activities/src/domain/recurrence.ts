// Recurring activities (docs/decisions.md §5): occurrence n of a series falls n intervals
// after the first one's due date. Counting from the first (not from the previous
// occurrence) keeps a monthly series on the 31st on the last day of shorter months
// and back on the 31st after.
import { LAST_DAY } from '@lpm/shared/time';
import type { Recurrence } from '../data/activity-entity.ts';
import { occurrencePastCalendar } from '../contract/activity-errors.ts';

const pad = (n: number) => String(n).padStart(2, '0');
const daysIn = (year: number, month0: number) => new Date(Date.UTC(year, month0 + 1, 0)).getUTCDate();

function addMonths(date: string, months: number): string {
  const [y, m, d] = date.split('-').map(Number);
  const total = y * 12 + (m - 1) + months;
  const year = Math.floor(total / 12);
  const month0 = total % 12;
  return `${year}-${pad(month0 + 1)}-${pad(Math.min(d, daysIn(year, month0)))}`;
}

function addDays(date: string, days: number): string {
  const t = new Date(`${date}T00:00:00Z`);
  t.setUTCDate(t.getUTCDate() + days);
  return t.toISOString().slice(0, 10);
}

/** The due date of occurrence `n` (1 = the first, on `start`). */
export function occurrenceDate(start: string, r: Pick<Recurrence, 'frequency' | 'interval'>, n: number): string {
  const steps = (n - 1) * r.interval;
  switch (r.frequency) {
    case 'daily':
      return addDays(start, steps);
    case 'weekly':
      return addDays(start, 7 * steps);
    case 'monthly':
      return addMonths(start, steps);
    case 'yearly':
      return addMonths(start, 12 * steps);
  }
}

/**
 * The next occurrence after occurrence `n`, or null when the series has ended (count
 * or until). One that would fall past the platform's last day is a 422: the
 * completion is refused until the series is given an end (until, count) or none.
 */
export function nextOccurrence(
  start: string,
  r: Recurrence,
  n: number,
): { occurrence: number; due_date: string } | null {
  const next = n + 1;
  if (r.count !== null && next > r.count) return null;
  const due = occurrenceDate(start, r, next);
  // Past year 9999 the date is no longer YYYY-MM-DD (five-digit or signed years), nor compares as text.
  const pastCalendar = !/^\d{4}-/.test(due) || due > LAST_DAY;
  if (r.until !== null && (pastCalendar || due > r.until)) return null;
  if (pastCalendar) throw occurrencePastCalendar();
  return { occurrence: next, due_date: due };
}
