// A court's calendar (CPC art. 216): which days have no court business and why,
// and which fall in the recess of CPC art. 220. Holidays come from date-holidays
// (Brazil's national ones and, with a UF, that state's); the closures of
// court-rules.ts and the team's own closures are added on top.
import { createRequire } from 'node:module';
import type Holidays from 'date-holidays';
import type { Closure, Jurisdiction } from '@lpm/shared/court-calendar';
import { COMMON_CLOSURES, FEDERAL_CLOSURES, RECESS, type ClosureRule } from './court-rules.ts';

type DayNames = Map<string, string>;

/** The days of `year` that are holidays of the library's calendar (public ones only), by date. */
function publicHolidays(hd: Holidays, year: number): DayNames {
  const days: DayNames = new Map();
  for (const h of hd.getHolidays(year))
    if (h.type === 'public' && !days.has(h.date.slice(0, 10))) days.set(h.date.slice(0, 10), h.name);
  return days;
}

function rulesCalendar(HolidaysOf: typeof Holidays, rules: readonly ClosureRule[]): Holidays {
  const hd = new HolidaysOf();
  for (const r of rules) hd.setHoliday(r.rule, { name: r.name, type: 'public' });
  return hd;
}

/**
 * The library's calendars, loaded at the first question: date-holidays brings every
 * country's rules, moment-timezone and astronomical tables (about 35 MB resident), which
 * a process that never computes a court deadline does not need.
 */
let loaded: { HolidaysOf: typeof Holidays; national: Holidays; common: Holidays; federal: Holidays } | undefined;
function calendars() {
  if (!loaded) {
    const HolidaysOf = createRequire(import.meta.url)('date-holidays') as typeof Holidays;
    loaded = {
      HolidaysOf,
      national: new HolidaysOf('BR'),
      common: rulesCalendar(HolidaysOf, COMMON_CLOSURES),
      federal: rulesCalendar(HolidaysOf, FEDERAL_CLOSURES),
    };
  }
  return loaded;
}
const states = new Map<string, Holidays>();
/** Per jurisdiction and year: a calendar is asked about the same few years again and again. */
const yearCache = new Map<string, DayNames>();

function holidaysOf(j: Jurisdiction, year: number): DayNames {
  const key = `${j.uf ?? ''}|${j.branch}|${year}`;
  let days = yearCache.get(key);
  if (days) return days;
  // The first name wins: a national holiday keeps its own name where a closure rule repeats it.
  const { HolidaysOf, national, common, federal } = calendars();
  const layers = [publicHolidays(national, year), publicHolidays(common, year)];
  if (j.branch === 'federal') layers.push(publicHolidays(federal, year));
  if (j.uf) {
    let state = states.get(j.uf);
    if (!state) states.set(j.uf, (state = new HolidaysOf('BR', j.uf)));
    layers.push(publicHolidays(state, year));
  }
  days = new Map();
  for (const layer of layers) for (const [date, name] of layer) if (!days.has(date)) days.set(date, name);
  yearCache.set(key, days);
  return days;
}

export class CourtCalendar {
  private readonly jurisdiction: Jurisdiction;
  private readonly closures: Map<string, string>;

  constructor(jurisdiction: Jurisdiction, closures: readonly Closure[] = []) {
    this.jurisdiction = jurisdiction;
    this.closures = new Map(closures.map((c) => [c.date, c.name]));
  }

  /** Why `date` (YYYY-MM-DD) has no court business, or null when it has. */
  closedReason(date: string): string | null {
    const weekday = new Date(`${date}T00:00:00Z`).getUTCDay();
    if (weekday === 0 || weekday === 6) return 'weekend';
    const holiday = holidaysOf(this.jurisdiction, Number(date.slice(0, 4))).get(date);
    if (holiday) return `holiday: ${holiday}`;
    const closure = this.closures.get(date);
    return closure ? `team closure: ${closure}` : null;
  }

  /** Whether `date` falls in the recess of CPC art. 220 (20 December to 20 January, inclusive). */
  inRecess(date: string): boolean {
    const md = date.slice(5);
    return md >= RECESS.from || md <= RECESS.to;
  }
}
