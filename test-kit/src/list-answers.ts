// Assertions on a list endpoint's answer body ({ data, pagination }).

export interface ListBody {
  data: Record<string, unknown>[];
  pagination?: unknown;
}

/**
 * The list fits on its default page (page 1, 20 a page): its items' `field` are
 * `values` in this order, and the total is their count.
 */
export function expectOnlyPage(body: ListBody, field: string, values: unknown[]): void {
  expect(body.pagination).toEqual({ page: 1, limit: 20, total: values.length, pages: 1 });
  expect(body.data.map((item) => item[field])).toEqual(values);
}
