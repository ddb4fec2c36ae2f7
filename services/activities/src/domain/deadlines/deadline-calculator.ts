// Procedural deadlines counted as the CPC counts them: the first day excluded and
// the last included (art. 224), publication the first business day after the text
// is made available (art. 224 §2), counting from the first business day after
// publication (art. 224 §3), business days only (art. 219) or calendar days (CPP
// art. 798), the recess suspending business counting (art. 220), doubled time for
// the MP, the State and the Defensoria (arts. 180, 183, 186, 229). Every calendar
// day from the given date to the due date is in the trail with the reason it did
// or did not count.
import { nextDay } from '@lpm/shared/time';
import type { CourtCalendar } from './court-calendar.ts';
import { RECESS } from './court-rules.ts';
import type { Deadline, DeadlineInput, TrailDay } from '../../data/activity-entity.ts';

export const START_DAY = 'start day (CPC art. 224)';
export const MOVED = 'moved: last day not a business day';

export function computeDeadline(input: DeadlineInput, calendar: CourtCalendar): Deadline {
  const counting = input.counting ?? 'business';
  const days = input.double ? input.days * 2 : input.days;
  const given = input.start.made_available ?? input.start.published ?? input.start.from;
  if (!given) throw new RangeError('a deadline needs a start date');
  const trail: TrailDay[] = [{ date: given, counted: false, reason: START_DAY }];
  const skip = (date: string, reason: string) => trail.push({ date, counted: false, reason });
  const count = (date: string) => trail.push({ date, counted: true, reason: null });

  // Why a day does not count: the court closed, or (business counting only) the recess.
  const offReason = (date: string, recessCounts: boolean) =>
    calendar.closedReason(date) ?? (!recessCounts && calendar.inRecess(date) ? RECESS.reason : null);
  /** The first day after `date` on which `offReason` finds nothing; the days passed go to the trail. */
  const firstAfter = (date: string, recessCounts: boolean) => {
    let d = nextDay(date);
    for (let why = offReason(d, recessCounts); why; why = offReason(d, recessCounts)) {
      skip(d, why);
      d = nextDay(d);
    }
    return d;
  };

  let publication: string | null = null;
  let published = given;
  if (input.start.made_available) {
    // Publication needs a day of court business; the recess suspends counting, not the gazette.
    publication = published = firstAfter(given, true);
    skip(publication, START_DAY);
  }

  const recessCounts = counting === 'calendar';
  const start = firstAfter(published, recessCounts);
  count(start);
  let due = start;
  if (counting === 'business') {
    for (let n = 1; n < days;) {
      due = nextDay(due);
      const why = offReason(due, false);
      if (why) skip(due, why);
      else {
        count(due);
        n++;
      }
    }
  } else {
    // Every calendar day counts; only the last one must have court business.
    for (let n = 2; n < days; n++) count((due = nextDay(due)));
    if (days > 1) {
      due = nextDay(due);
      if (calendar.closedReason(due)) {
        // Art. 224 §1: a last day without court business moves to the next business day.
        skip(due, MOVED);
        due = firstAfter(due, true);
      }
      count(due);
    }
  }
  return { start_date: start, due_date: due, publication_date: publication, days, trail };
}
