// One team's search entries held in process (search-index.ts): per record its id,
// version, folded texts, and the fields a list filters and sorts on, column by
// column and compactly (a code per value where values repeat, typed arrays for
// instants and numbers). A search is a scan of the texts and filters in memory and
// a partial sort of the matches, in the order the store gives: BSON's order of
// types, strings by code point (UTF-8 bytes, as MongoDB and FerretDB compare them
// without a collation), ties by `_id`.
import type { Document } from 'mongodb';
import {
  TextColumn,
  columnOf,
  compareStrings,
  grown,
  inRange,
  isRange,
  type Column,
  type FieldKind,
} from './search-columns.ts';

export type { FieldKind } from './search-columns.ts';

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

  /** Each record held, as apply() takes it. */
  *rows(): Generator<Document> {
    for (const [id, row] of this.rowOf) {
      const r: Document = { _id: id, version: this.versions[row] };
      for (const [f, col] of this.texts) r[f] = col.get(row);
      for (const [f, col] of this.columns) r[f] = col.get(row);
      yield r;
    }
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
    const first =
      wanted <= HEAP_MAX && wanted * 4 < total
        ? smallest(matched, wanted, compare)
        : matched.sort(compare).subarray(0, wanted);
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
      for (let i = size++; i > 0;) {
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
