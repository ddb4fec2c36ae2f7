// A team's day counts as its counts documents hold them (list-counts.ts), and the
// arithmetic on them: the combinations of a day's records, and the deltas added.
import type { Document } from 'mongodb';
import type { CountDelta } from './list-count-deltas.ts';
import type { Day } from './list-day.ts';

/** The records of one day with the same counted values. */
export interface Combination {
  v: Record<string, unknown>;
  n: number;
}

export interface DayCount {
  d: Day;
  n: number;
  by: Combination[];
  /** Took a delta since its last recount: counted again later, or at the next start if this process dies first. */
  r?: true;
  /** When the last recount began to read the day (ms): a record stored before that is in its count already. */
  t?: number;
}

export interface CountsDocument {
  _id: string;
  /** `<collection>:<team>`: a team's documents are read by this equality. */
  owner: string;
  /**
   * The DayCount[] as JSON: FerretDB converts every nested value of a document it
   * reads, and a team's counts as sub-documents took it about 80 ms a page to read
   * (100,000 records over a year); one string each is one value.
   */
  days: string;
  /**
   * The ids of the deltas the last fold counted: it deletes them after this write,
   * and one it could not delete (it died first) must not count twice.
   */
  absorbed?: string[];
}

export const daysOf = (doc: CountsDocument | null): DayCount[] => (doc ? (JSON.parse(doc.days) as DayCount[]) : []);

/** Whether every combination of the day was counted with each of `fields`. */
export const countedWith = (day: DayCount, fields: readonly string[]): boolean =>
  day.by.every((c) => fields.every((f) => f in c.v));

/** Oldest first, the day `null` last. */
export const byDay = (a: Day, b: Day): number => (a === null ? (b === null ? 0 : 1) : b === null ? -1 : a - b);

export function combinations(records: Document[], counted: readonly string[]): Combination[] {
  const byKey = new Map<string, Combination>();
  for (const r of records) {
    const v = Object.fromEntries(counted.map((f): [string, unknown] => [f, r[f] ?? null]));
    const key = JSON.stringify(counted.map((f) => v[f]));
    const c = byKey.get(key);
    if (c) c.n++;
    else byKey.set(key, { v, n: 1 });
  }
  return [...byKey.values()];
}

/**
 * Adds deltas to a team's day counts, oldest first: each once (none the counts
 * document says it absorbed), and none that a recount which began after its record
 * was stored counted already. A move takes the record from its old values' count to
 * its new one; a move whose old values the day does not count (a count that drifted)
 * is left to the day's recheck. `mark`: the days that took one are counted again later.
 */
export function addDeltas(
  days: DayCount[],
  deltas: CountDelta[],
  absorbed: Set<string>,
  counted: readonly string[],
  mark = false,
): void {
  const same = (c: Combination, v: Record<string, unknown>) => counted.every((f) => c.v[f] === v[f]);
  for (const delta of [...deltas].sort((a, b) => a.at - b.at)) {
    if (absorbed.has(delta._id)) continue;
    let count = days.find((d) => d.d === delta.d);
    if (count?.t !== undefined && count.t >= delta.at) continue;
    if (delta.from) {
      const from = delta.from;
      const left = count?.by.find((c) => same(c, from) && c.n > 0);
      if (!count || !left) continue;
      left.n--;
    } else {
      if (!count) days.push((count = { d: delta.d, n: 0, by: [] }));
      count.n++;
    }
    if (mark) count.r = true;
    const combination = count.by.find((c) => same(c, delta.v));
    if (combination) combination.n++;
    else count.by.push({ v: delta.v, n: 1 });
  }
}
