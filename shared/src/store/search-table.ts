// One team's search entries held in process (search-index.ts): per record its id,
// version, folded texts, and the fields a list filters and sorts on, column by
// column and compactly (a code per value where values repeat, typed arrays for
// instants and numbers). A search is a scan of the texts and filters in memory and
// a partial sort of the matches, in the order the store gives: BSON's order of
// types, strings by code point (UTF-8 bytes, as MongoDB and FerretDB compare them
// without a collation), ties by `_id`.
import type { Document } from 'mongodb';

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

export interface TableQuery {
  /** Field → folded needle: a record matches when one of the fields holds its needle. */
  contains: Record<string, string>;
  /** Equalities (a value; null also matches a missing field) and ranges on fields, all of them. */
  where: Record<string, unknown>;
  /** The store sort: field → direction, `_id` last. */
  sort: Record<string, 1 | -1>;
  skip: number;
  limit: number;
}

/** The page's ids and how many records match in all. */
export interface TablePage {
  ids: string[];
  total: number;
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
function inRange(v: unknown, r: Range): boolean {
  const bound = (limit: unknown, ok: (c: number) => boolean) => limit === undefined || (v !== null && v !== undefined && typeRank(v) === typeRank(limit) && ok(compareValues(v, limit)));
  return bound(r.$gt, (c) => c > 0) && bound(r.$gte, (c) => c >= 0) && bound(r.$lt, (c) => c < 0) && bound(r.$lte, (c) => c <= 0);
}

const isRange = (v: unknown): v is Range =>
  typeof v === 'object' && v !== null && !(v instanceof Date) && Object.keys(v).length > 0 && Object.keys(v).every((k) => ['$gt', '$gte', '$lt', '$lte'].includes(k));

interface Column {
  grow(capacity: number): void;
  set(row: number, value: unknown): void;
  get(row: number): unknown;
  /** A row predicate for equality with `value`; null when no row can hold it. */
  equals(value: unknown): ((row: number) => boolean) | null;
  /** A comparison of two rows' values, in the store's order. */
  comparer(): (a: number, b: number) => number;
}

function grown<T extends Float64Array | Int32Array>(old: T, capacity: number, make: (n: number) => T): T {
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
class TextColumn implements Column {
  private readonly values: (string | null)[] = [];

  grow(): void {}

  set(row: number, value: unknown): void {
    if (value !== null && value !== undefined && typeof value !== 'string') throw new TypeError('a text field holds strings only');
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
    else if (this.time ? value instanceof Date : typeof value === 'number') this.values[row] = +(value as number | Date);
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

function columnOf(kind: FieldKind): Column {
  switch (kind) {
    case 'code':
      return new CodeColumn();
    case 'text':
      return new TextColumn();
    default:
      return new NumberColumn(kind === 'time');
  }
}

/** Up to this many first matches of a page (skip + limit), they are picked by a heap instead of sorting every match. */
const HEAP_MAX = 2000;

export class SearchTable {
  private readonly columns = new Map<string, Column>();
  private readonly texts = new Map<string, TextColumn>();
  private ids: (string | null)[] = [];
  private versions = new Int32Array(0);
  private readonly rowOf = new Map<string, number>();
  /** Rows of removed records, used again first. */
  private readonly free: number[] = [];
  private capacity = 0;

  constructor(texts: readonly string[], fields: Record<string, FieldKind>) {
    for (const f of texts) this.texts.set(f, new TextColumn());
    for (const [f, kind] of Object.entries(fields)) this.columns.set(f, columnOf(kind));
  }

  /** Records held. */
  get size(): number {
    return this.rowOf.size;
  }

  /** The version held of record `id`, or null. */
  versionOf(id: string): number | null {
    const row = this.rowOf.get(id);
    return row === undefined ? null : this.versions[row];
  }

  /** Holds `record` (its id, version, texts and fields) unless a version as new is held already; true when it changed what is held. */
  apply(record: Document): boolean {
    const id = String(record._id);
    const version = Number(record.version);
    let row = this.rowOf.get(id);
    if (row !== undefined && this.versions[row] >= version) return false;
    row ??= this.newRow(id);
    this.versions[row] = version;
    for (const [f, col] of this.texts) col.set(row, record[f]);
    for (const [f, col] of this.columns) col.set(row, record[f]);
    return true;
  }

  /** Stops holding record `id` (gone from the store). */
  remove(id: string): void {
    const row = this.rowOf.get(id);
    if (row === undefined) return;
    this.rowOf.delete(id);
    this.ids[row] = null;
    for (const col of this.texts.values()) col.set(row, null);
    this.free.push(row);
  }

  private newRow(id: string): number {
    let row = this.free.pop();
    if (row === undefined) {
      row = this.ids.length;
      if (row >= this.capacity) {
        this.capacity = Math.max(1024, this.capacity * 2);
        this.versions = grown(this.versions, this.capacity, (n) => new Int32Array(n));
        for (const col of [...this.columns.values(), ...this.texts.values()]) col.grow(this.capacity);
      }
    }
    this.ids[row] = id;
    this.rowOf.set(id, row);
    return row;
  }

  /** The page of the records that match, in the sort's order, and how many match. */
  query(q: TableQuery): TablePage {
    const matched = this.matches(q);
    const total = matched.length;
    const wanted = Math.min(total, q.skip + q.limit);
    if (q.skip >= wanted) return { ids: [], total };
    const compare = this.comparer(q.sort);
    const first = wanted <= HEAP_MAX && wanted * 4 < total ? smallest(matched, wanted, compare) : matched.sort(compare).subarray(0, wanted);
    return { ids: Array.from(first.subarray(q.skip), (row) => this.ids[row]!), total };
  }

  /** The rows that match, in no order. */
  private matches(q: TableQuery): Int32Array {
    const tests: ((row: number) => boolean)[] = [];
    for (const [f, wanted] of Object.entries(q.where)) {
      const col = this.column(f);
      if (isRange(wanted)) {
        tests.push((row) => inRange(col.get(row), wanted));
        continue;
      }
      const test = col.equals(wanted);
      if (!test) return new Int32Array(0);
      tests.push(test);
    }
    const needles = Object.entries(q.contains).map(([f, needle]): [TextColumn, string] => {
      const col = this.texts.get(f);
      if (!col) throw new Error(`not a search text: ${f}`);
      return [col, needle];
    });
    const out = new Int32Array(this.size);
    let n = 0;
    for (let row = 0; row < this.ids.length; row++) {
      if (this.ids[row] === null) continue;
      if (!tests.every((t) => t(row))) continue;
      if (needles.length > 0 && !needles.some(([col, needle]) => col.holds(row, needle))) continue;
      out[n++] = row;
    }
    return out.subarray(0, n);
  }

  private column(field: string): Column {
    const col = this.columns.get(field);
    if (!col) throw new Error(`not a search field: ${field}`);
    return col;
  }

  /** Rows in the store's order of `sort` (the last key `_id`, by code point). */
  private comparer(sort: Record<string, 1 | -1>): (a: number, b: number) => number {
    const keys = Object.entries(sort).map(([f, direction]): [(a: number, b: number) => number, number] => [
      f === '_id' ? (a, b) => compareStrings(this.ids[a]!, this.ids[b]!) : this.column(f).comparer(),
      direction,
    ]);
    return (a, b) => {
      for (const [compare, direction] of keys) {
        const c = compare(a, b);
        if (c !== 0) return c * direction;
      }
      return 0;
    };
  }
}

/** The `k` first rows of `rows` in `compare`'s order, sorted: a max-heap of k. */
function smallest(rows: Int32Array, k: number, compare: (a: number, b: number) => number): Int32Array {
  const heap = new Int32Array(k);
  let size = 0;
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let top = i;
      if (l < size && compare(heap[l], heap[top]) > 0) top = l;
      if (r < size && compare(heap[r], heap[top]) > 0) top = r;
      if (top === i) return;
      [heap[i], heap[top]] = [heap[top], heap[i]];
      i = top;
    }
  };
  for (const row of rows) {
    if (size < k) {
      heap[size] = row;
      for (let i = size++; i > 0; ) {
        const parent = (i - 1) >> 1;
        if (compare(heap[i], heap[parent]) <= 0) break;
        [heap[i], heap[parent]] = [heap[parent], heap[i]];
        i = parent;
      }
    } else if (compare(row, heap[0]) < 0) {
      heap[0] = row;
      down(0);
    }
  }
  return heap.sort(compare);
}
