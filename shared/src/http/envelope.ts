export interface Pagination {
  page: number;
  limit: number;
  total: number;
  pages: number;
}

export const ok = <T>(data: T) => ({ success: true as const, data });

export const page = <T>(data: T[], pagination: Pagination) => ({ success: true as const, data, pagination });

export function paginationBlock(pageNo: number, limit: number, total: number): Pagination {
  return { page: pageNo, limit, total, pages: Math.ceil(total / limit) };
}
