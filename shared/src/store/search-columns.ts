// The columns a SearchTable holds its records' fields in (search-table.ts), and the
// store's order of values they sort by.
/**
 * How a field is held: `code`, a number per distinct value (strings, numbers or
 * booleans that repeat: a status, a client id, a day); `text`, the string itself;
 * `number`; `time`, an instant (a Date).
 */
export type FieldKind = 'code' | 'text' | 'number' | 'time';

/** A range on a field, as the store's filter writes it. */
export interface Range {
  $gt?: unknown;
  $gte?: unknown;
  $lt?: unknown;
  $lte?: unknown;
}

/** BSON's order of the types a record's fields hold here (null and missing first, then numbers, strings, booleans, dates). */
function typeRank(v: unknown): number {
  if (v === null || v === undefined) return 1;
  if (typeof v === 'number') return 2;
  if (typeof v === 'string') return 3;
  if (typeof v === 'boolean') return 8;
  if (v instanceof Date) return 9;
  throw new TypeError(`a search field holds a value of an unsupported type: ${typeof v}`);
}

/** A UTF-16 code unit moved so that surrogates (code points past U+FFFF) sort after U+E000-U+FFFF, as in code point order. */
const codePointOrder = (c: number): number => (c >= 0xd800 ? (c < 0xe000 ? c + 0x2000 : c - 0x800) : c);

/** Strings in code point order, which is UTF-8 byte order. */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointOrder(x) - codePointOrder(y);
  }
  return a.length - b.length;
}

/** Two stored values in the store's sort order. */
export function compareValues(a: unknown, b: unknown): number {
  const ta = typeRank(a);
  const tb = typeRank(b);
  if (ta !== tb) return ta - tb;
  switch (ta) {
    case 1:
      return 0;
    case 2:
      return (a as number) - (b as number);
    case 3:
      return compareStrings(a as string, b as string);
    case 8:
      return Number(a) - Number(b);
    default:
      return (a as Date).getTime() - (b as Date).getTime();
  }
}

/** Whether `v` is in the range: the store compares only values of the same type (null within none). */
export function inRange(v: unknown, r: Range): boolean {
  const bound = (limit: unknown, ok: (c: number) => boolean) =>
    limit === undefined ||
    (v !== null && v !== undefined && typeRank(v) === typeRank(limit) && ok(compareValues(v, limit)));
  return (
    bound(r.$gt, (c) => c > 0) &&
    bound(r.$gte, (c) => c >= 0) &&
    bound(r.$lt, (c) => c < 0) &&
    bound(r.$lte, (c) => c <= 0)
  );
}

export const isRange = (v: unknown): v is Range =>
  typeof v === 'object' &&
  v !== null &&
  !(v instanceof Date) &&
  Object.keys(v).length > 0 &&
  Object.keys(v).every((k) => ['$gt', '$gte', '$lt', '$lte'].includes(k));

export interface Column {
  grow(capacity: number): void;
  set(row: number, value: unknown): void;
  get(row: number): unknown;
  /** A row predicate for equality with `value`; null when no row can hold it. */
  equals(value: unknown): ((row: number) => boolean) | null;
  /** A comparison of two rows' values, in the store's order. */
  comparer(): (a: number, b: number) => number;
}

export function grown<T extends Float64Array | Int32Array>(old: T, capacity: number, make: (n: number) => T): T {
  if (old.length >= capacity) return old;
  const next = make(capacity);
  next.set(old);
  return next;
}

/** Repeating values: each distinct value once, a code per row. */
class CodeColumn implements Column {
  private codes = new Int32Array(0);
  private readonly values: unknown[] = [];
  private readonly codeOf = new Map<unknown, number>();

  grow(capacity: number): void {
    this.codes = grown(this.codes, capacity, (n) => new Int32Array(n));
  }

  set(row: number, value: unknown): void {
    if (value instanceof Date) throw new TypeError('a code field holds no instants (declare it a time field)');
    const v = value ?? null;
    let code = this.codeOf.get(v);
    if (code === undefined) {
      code = this.values.push(v) - 1;
      this.codeOf.set(v, code);
    }
    this.codes[row] = code;
  }

  get(row: number): unknown {
    return this.values[this.codes[row]];
  }

  equals(value: unknown): ((row: number) => boolean) | null {
    const code = this.codeOf.get(value ?? null);
    if (code === undefined) return null;
    const codes = this.codes;
    return (row) => codes[row] === code;
  }

  comparer(): (a: number, b: number) => number {
    // The codes ranked once in the store's order of their values.
    const order = this.values.map((_, code) => code).sort((x, y) => compareValues(this.values[x], this.values[y]));
    const rank = new Int32Array(this.values.length);
    order.forEach((code, i) => (rank[code] = i));
    const codes = this.codes;
    return (a, b) => rank[codes[a]] - rank[codes[b]];
  }
}

/** Strings that rarely repeat (a title to sort by), null for none. */
export class TextColumn implements Column {
  private readonly values: (string | null)[] = [];

  grow(): void {}

  set(row: number, value: unknown): void {
    if (value !== null && value !== undefined && typeof value !== 'string')
      throw new TypeError('a text field holds strings only');
    this.values[row] = value ?? null;
  }

  get(row: number): string | null {
    return this.values[row] ?? null;
  }

  equals(value: unknown): (row: number) => boolean {
    const v = value ?? null;
    return (row) => (this.values[row] ?? null) === v;
  }

  comparer(): (a: number, b: number) => number {
    return (a, b) => compareValues(this.values[a], this.values[b]);
  }

  /** Whether the row's text holds `needle`. */
  holds(row: number, needle: string): boolean {
    const v = this.values[row];
    return v !== null && v !== undefined && v.includes(needle);
  }
}

/** Numbers or instants as float64, NaN for none. */
class NumberColumn implements Column {
  private values = new Float64Array(0);
  private readonly time: boolean;

  constructor(time: boolean) {
    this.time = time;
  }

  grow(capacity: number): void {
    this.values = grown(this.values, capacity, (n) => new Float64Array(n));
  }

  set(row: number, value: unknown): void {
    if (value === null || value === undefined) this.values[row] = NaN;
    else if (this.time ? value instanceof Date : typeof value === 'number')
      this.values[row] = +(value as number | Date);
    else throw new TypeError(`a ${this.time ? 'time' : 'number'} field holds ${this.time ? 'Dates' : 'numbers'} only`);
  }

  get(row: number): number | Date | null {
    const v = this.values[row];
    if (Number.isNaN(v)) return null;
    return this.time ? new Date(v) : v;
  }

  equals(value: unknown): ((row: number) => boolean) | null {
    if (value === null || value === undefined) return (row) => Number.isNaN(this.values[row]);
    if (this.time ? !(value instanceof Date) : typeof value !== 'number') return null;
    const v = +(value as number | Date);
    return (row) => this.values[row] === v;
  }

  comparer(): (a: number, b: number) => number {
    const values = this.values;
    return (a, b) => {
      const x = values[a];
      const y = values[b];
      if (Number.isNaN(x) || Number.isNaN(y)) return Number(Number.isNaN(y)) - Number(Number.isNaN(x));
      return x - y;
    };
  }
}

export function columnOf(kind: FieldKind): Column {
  switch (kind) {
    case 'code':
      return new CodeColumn();
    case 'text':
      return new TextColumn();
    default:
      return new NumberColumn(kind === 'time');
  }
}
