// Time helpers every domain uses: instants as the API writes them, and calendar
// days and wall-clock moments in a team's time zone.
import { BoundedCache } from './bounded-cache.ts';

export const DAY_MS = 86_400_000;

/**
 * The calendar days the platform takes (docs/limits.md): years 1900 to 9998, so that
 * the day after any of them, and its instant in any time zone, can be computed.
 */
export const FIRST_DAY = '1900-01-01';
export const LAST_DAY = '9998-12-31';

/** An instant as the API writes it (ISO 8601 UTC with milliseconds); null stays null. */
export function iso(d: Date): string;
export function iso(d: Date | null | undefined): string | null;
export function iso(d: Date | null | undefined): string | null {
  return d ? d.toISOString() : null;
}

/**
 * Formatters by use and time zone, shared by every zone computation of the process.
 * A zone is keyed as spelt, and spellings come from callers (a team's setting, as an
 * older gateway stored it), so at most this many are kept.
 */
export const ZONE_FORMATTERS_KEPT = 256;
const formatters = new BoundedCache<string, Intl.DateTimeFormat>(ZONE_FORMATTERS_KEPT);

const FORMATS = {
  day: ['en-CA', { year: 'numeric', month: '2-digit', day: '2-digit' }],
  moment: [
    'en-US',
    {
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    },
  ],
} as const satisfies Record<string, [string, Intl.DateTimeFormatOptions]>;

/** The formatter of `use` in `timeZone`; throws a RangeError for a zone Intl does not know. */
function formatter(use: keyof typeof FORMATS, timeZone: string): Intl.DateTimeFormat {
  return formatters.get(
    `${use} ${timeZone}`,
    () => new Intl.DateTimeFormat(FORMATS[use][0], { timeZone, ...FORMATS[use][1] }),
  );
}

/** How many formatters are kept now (at most ZONE_FORMATTERS_KEPT). */
export const zoneFormattersKept = (): number => formatters.size;

/**
 * The IANA time zone `tz` names, spelt as Intl spells it (`aMeRiCa/sao_paulo` is
 * `America/Sao_Paulo`, `US/Eastern` is `America/New_York`), or null when it names
 * none. Intl also takes UTC offsets such as +03:00, which are not zones.
 */
export function canonicalTimeZone(tz: string): string | null {
  if (/^[+-]/.test(tz)) return null;
  try {
    return formatter('moment', tz).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

/** The calendar day (YYYY-MM-DD) of instant `at` in `timeZone`. */
export function dayIn(timeZone: string, at: Date = new Date()): string {
  return formatter('day', timeZone).format(at);
}

/** Days asked for lately: a court deadline walks the same few months day by day, for every deadline of a team. */
const nextDays = new BoundedCache<string, string>(4096);

/** The calendar day after `date` (YYYY-MM-DD). */
export function nextDay(date: string): string {
  return nextDays.get(date, () => {
    const d = new Date(`${date}T00:00:00Z`);
    d.setUTCDate(d.getUTCDate() + 1);
    return d.toISOString().slice(0, 10);
  });
}

/** The zone's offset from UTC (ms) at instant t (whole seconds). */
function offsetAt(timeZone: string, t: number): number {
  const p = Object.fromEntries(
    formatter('moment', timeZone)
      .formatToParts(t)
      .map(({ type, value }) => [type, Number(value)]),
  );
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - t;
}

/**
 * The instant of wall-clock `date` (YYYY-MM-DD) at `time` (HH:mm or HH:mm:ss) in the
 * IANA zone `timeZone`. Across a DST change it resolves like Temporal's 'compatible':
 * a time skipped by the change moves forward by the gap, a repeated time is its first
 * occurrence.
 */
export function zonedMoment(date: string, timeZone: string, time = '23:59:59'): Date {
  const d = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  const t = /^(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(time);
  const wall = d && t ? Date.UTC(+d[1], +d[2] - 1, +d[3], +t[1], +t[2], +(t[3] ?? 0)) : NaN;
  // Date.UTC rolls out-of-range parts over (02-30, 24:00): the round trip catches them.
  if (!d || !t || new Date(wall).toISOString().slice(0, 19) !== `${date}T${t[1]}:${t[2]}:${t[3] ?? '00'}`) {
    throw new RangeError(`not a wall-clock date and time: ${date} ${time}`);
  }
  // Zones change offset at most once within a day either side: try both offsets.
  const before = offsetAt(timeZone, wall - DAY_MS);
  const after = offsetAt(timeZone, wall + DAY_MS);
  const matches = [wall - before, wall - after].filter((u) => u + offsetAt(timeZone, u) === wall);
  return new Date(matches.length ? Math.min(...matches) : wall - before);
}

/** The instants that bound days `from` to `to` (YYYY-MM-DD, both included) in `timeZone`, or undefined when neither is given. */
export function zonedDays(
  from: string | undefined,
  to: string | undefined,
  timeZone: string,
): { from?: Date; before?: Date } | undefined {
  if (!from && !to) return undefined;
  return {
    from: from ? zonedMoment(from, timeZone, '00:00:00') : undefined,
    before: to ? zonedMoment(nextDay(to), timeZone, '00:00:00') : undefined,
  };
}
