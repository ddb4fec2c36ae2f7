// List parameters shared by every list endpoint (docs/decisions.md §2, docs/limits.md).
import type { Collection, Document, Filter } from 'mongodb';
import { paginationBlock, type Pagination } from './envelope.ts';
import type { ObjectOf, Schema } from './schemas.ts';

/** The last page a list serves (docs/limits.md): a million records deep at 100 a page. */
export const PAGE_MAX = 10_000;
export const LIMIT_MAX = 100;

/** page and limit always hold a value once validated (their defaults). */
export interface ListQuery<S extends string = string> {
  page: number;
  limit: number;
  sort?: S | `-${S}`;
}

export interface SortSpec {
  field: string;
  direction: 1 | -1;
}

/** Query-string schema with page, limit, sort (restricted to `sortFields`) plus the list's own filters. */
export function listQuerySchema<
  const S extends string,
  F extends Record<string, Schema<unknown>> = Record<never, never>,
>(sortFields: readonly S[], filters: F = {} as F): Schema<ListQuery<S> & ObjectOf<F, never>> {
  return {
    type: 'object',
    properties: {
      page: {
        type: 'integer',
        minimum: 1,
        maximum: PAGE_MAX,
        default: 1,
        'x-message': `page must be an integer from 1 to ${PAGE_MAX}`,
      },
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: LIMIT_MAX,
        default: 20,
        'x-message': `limit must be an integer from 1 to ${LIMIT_MAX}`,
      },
      sort: { type: 'string', enum: sortFields.flatMap((f) => [f, `-${f}`]), 'x-message': 'Invalid sort field' },
      ...filters,
    },
  };
}

export function parseSort(sort: string | undefined, fallback: string): SortSpec {
  const s = sort ?? fallback;
  return s.startsWith('-') ? { field: s.slice(1), direction: -1 } : { field: s, direction: 1 };
}

/**
 * The store sort of a list: `sortParam` (or `fallback`) names a field, which
 * `keysByField` maps to the stored keys that order it; every key but the last
 * ascends (a leading `*_missing` marker puts records without the value last either
 * way), the last follows the direction, and `_id` breaks ties (each sort index ends
 * with `_id` too).
 */
export function sortOrder(
  sortParam: string | undefined,
  fallback: string,
  keysByField: Record<string, readonly string[]>,
): Record<string, 1 | -1> {
  const sort = parseSort(sortParam, fallback);
  return storeSort(keysByField[sort.field] ?? [], sort.direction);
}

/** The store sort of `keys` in `direction`, as `sortOrder` builds it. */
export function storeSort(keys: readonly string[], direction: 1 | -1): Record<string, 1 | -1> {
  const order: Record<string, 1 | -1> = {};
  keys.forEach((k, i) => (order[k] = i < keys.length - 1 ? 1 : direction));
  order._id = direction;
  return order;
}

export function pageWindow(q: ListQuery): { skip: number; limit: number } {
  return { skip: (q.page - 1) * q.limit, limit: q.limit };
}

/** One page of records, and how many records match in all. */
export interface RecordPage<R> {
  records: R[];
  total: number;
}

/** The page `q` asks for of a plain find in `options.sort` order, and how many records match in all. */
export async function findPage<R extends Document>(
  collection: Collection<R>,
  filter: Filter<R>,
  q: ListQuery,
  options: { projection: Document; sort: Record<string, 1 | -1> },
): Promise<RecordPage<R>> {
  const [records, total] = await Promise.all([
    collection.find<R>(filter, { ...options, ...pageWindow(q) }).toArray(),
    collection.countDocuments(filter),
  ]);
  return { records, total };
}

export function pagination(q: ListQuery, total: number): Pagination {
  return paginationBlock(q.page, q.limit, total);
}
