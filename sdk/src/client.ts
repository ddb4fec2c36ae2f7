// The typed client: one method per operation, named after its operationId, over
// openapi-fetch with the bearer key, retries and idempotency keys
// (retrying-fetch.ts). A method resolves to the answer's envelope (`data`, and
// `pagination` on lists) and throws LpmError on any other status.
import createFetchClient from 'openapi-fetch';
import { errorOf } from './errors.ts';
import { OPERATIONS } from './operations.ts';
import { retryingFetch, type RetryOptions } from './retrying-fetch.ts';
import type { operations, paths } from './schema.d.ts';

export type OperationId = keyof typeof OPERATIONS & keyof operations;

/** No fields: what an operation without parameters or body adds to its arguments (the type `{}`). */
type NoFields = Record<never, never>;

type Parameters<Op> = Op extends { parameters: infer P }
  ? { [K in keyof P as P[K] extends undefined ? never : K]: P[K] }
  : NoFields;
type RequestBody<Op> = Op extends { requestBody: { content: { 'application/json': infer B } } }
  ? { body: B }
  : Op extends { requestBody?: { content: { 'application/json': infer B } } }
    ? { body?: B }
    : NoFields;
/** What an operation takes: `path` and `query` parameters, `header` ones, and its JSON `body`. */
export type Args<Id extends OperationId> = Omit<Parameters<operations[Id]>, 'header' | 'cookie'> &
  RequestBody<operations[Id]> & { header?: Record<string, string> };

type Success<R> = R extends { 200: { content: { 'application/json': infer B } } }
  ? B
  : R extends { 201: { content: { 'application/json': infer B } } }
    ? B
    : never;
/** What an operation answers with on success: its envelope. */
export type Answer<Id extends OperationId> = Success<operations[Id]['responses']>;

type Optional<A> = NoFields extends A ? [args?: A] : [args: A];
export type Methods = { [Id in OperationId]: (...args: Optional<Args<Id>>) => Promise<Answer<Id>> };

/** The operations that answer with a page of a list. */
export type ListOperationId = {
  [Id in OperationId]: Answer<Id> extends { data: unknown[]; pagination: object } ? Id : never;
}[OperationId];
type Item<Id extends ListOperationId> = Answer<Id> extends { data: (infer T)[] } ? T : never;

export interface ClientOptions extends RetryOptions {
  /** The gateway's address, e.g. https://api.example.com */
  baseUrl: string;
  /** An API key, lpk_... */
  apiKey: string;
  /** A fetch of your own (default: globalThis.fetch). */
  fetch?: (request: Request) => Promise<Response>;
}

export type LpmClient = Methods & {
  /** Every item of a list, page after page (`limit` items a request, 100 by default). */
  paginate<Id extends ListOperationId>(operationId: Id, ...args: Optional<Args<Id>>): AsyncIterable<Item<Id>>;
};

export function createClient(opts: ClientOptions): LpmClient {
  const base = opts.fetch ?? ((request: Request) => globalThis.fetch(request));
  const client = createFetchClient<paths>({
    baseUrl: opts.baseUrl.replace(/\/+$/, ''),
    headers: { authorization: `Bearer ${opts.apiKey}` },
    fetch: retryingFetch(base, opts),
  });

  const call = async (id: OperationId, args: Record<string, unknown> = {}) => {
    const { method, path } = OPERATIONS[id];
    const { body, header, ...params } = args;
    const result = await (
      client.request as (
        m: string,
        p: string,
        init: object,
      ) => Promise<{ data?: unknown; error?: unknown; response: Response }>
    )(method.toLowerCase(), path, {
      params: { ...params, ...(header ? { header } : {}) },
      ...(body !== undefined ? { body } : {}),
    });
    if (!result.response.ok) throw errorOf(result.response, result.error);
    return result.data;
  };

  const methods = Object.fromEntries(
    Object.keys(OPERATIONS).map((id) => [id, (args?: Record<string, unknown>) => call(id as OperationId, args)]),
  ) as unknown as Methods;

  return {
    ...methods,
    async *paginate(id: ListOperationId, args: { query?: { page?: number } } & Record<string, unknown> = {}) {
      const query = { limit: 100, ...args.query };
      for (let page = query.page ?? 1; ; page++) {
        const answer = (await call(id, { ...args, query: { ...query, page } })) as {
          data: unknown[];
          pagination: { pages: number };
        };
        yield* answer.data;
        if (page >= answer.pagination.pages) return;
      }
    },
  } as LpmClient;
}
