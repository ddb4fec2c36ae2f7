// Calls from one service to another's internal endpoints: the caller's team and
// user travel in the same headers the gateway sets, with the internal credential.
import { serviceUnavailable } from '../errors.ts';
import { HEADER, identityHeaders, type Identity } from '../identity.ts';
import { injectTraceHeaders } from '../telemetry.ts';
import { countedCallHeaders } from '../counted-requests.ts';
import type { ListQuery } from '../http/pagination.ts';
import { replicaUrls } from '../service/names.ts';

/**
 * Who a call is made for: a team (and user), or a whole `Identity`, whose scopes and
 * team settings then travel too, as the gateway sends them (for a public route of
 * another service that reads them, e.g. a team's kanban).
 */
export type Caller =
  | {
      teamId: string;
      /** Absent when the question is not asked on a user's behalf (the gateway's directory). */
      userId?: string;
    }
  | Identity;

export interface RequestExtras {
  /** More headers (e.g. Idempotency-Key). */
  headers?: Record<string, string>;
  timeoutMs?: number;
}

const isIdentity = (who: Caller): who is Identity => 'scopes' in who && 'settings' in who;

export interface ServiceReply<T = unknown> {
  status: number;
  body: T;
}

export interface ServiceClientOptions {
  /** The called service's name, for error messages. */
  name: string;
  /** One URL, or the service's replicas comma-separated: requests go to each in turn, and on to the next when one refuses the connection. */
  baseUrl: string;
  internalToken: string;
  timeoutMs?: number;
}

export class ServiceClient {
  private readonly opts: ServiceClientOptions;
  private readonly bases: string[];
  private turn = 0;

  constructor(opts: ServiceClientOptions) {
    this.opts = opts;
    this.bases = replicaUrls(opts.baseUrl);
  }

  /**
   * 2xx and 4xx replies are returned; a 5xx, a timeout or no answer from any replica
   * is a 503 for our own caller.
   */
  async request<T = unknown>(
    who: Caller,
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    extras: RequestExtras = {},
  ): Promise<ServiceReply<T>> {
    const headers = injectTraceHeaders({
      ...(isIdentity(who)
        ? identityHeaders(who, this.opts.internalToken)
        : {
            [HEADER.internalToken]: this.opts.internalToken,
            [HEADER.teamId]: who.teamId,
            ...(who.userId ? { [HEADER.userId]: who.userId } : {}),
          }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...countedCallHeaders(),
      ...extras.headers,
    });
    const init = {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      // One budget for the call, whichever replicas it tries.
      signal: AbortSignal.timeout(extras.timeoutMs ?? this.opts.timeoutMs ?? 5000),
    };
    // Each replica in turn from the next one: a replica that refuses or drops the
    // connection before any answer (restarting, killed) passes the call to the next.
    // Internal calls are idempotent, so a request it may have received does no harm.
    const first = this.turn++;
    let res: Response | undefined;
    for (let i = 0; res === undefined; i++) {
      try {
        res = await fetch(new URL(path, this.bases[(first + i) % this.bases.length]), init);
      } catch (e) {
        if (i + 1 >= this.bases.length || !isConnectionFailure(e)) throw this.unavailable(e);
      }
    }
    const text = await res.text();
    if (res.status >= 500) {
      throw this.unavailable(new Error(`${method} ${path}: ${res.status} ${text.slice(0, 200)}`));
    }
    try {
      return { status: res.status, body: text ? (JSON.parse(text) as T) : (undefined as T) };
    } catch (e) {
      throw this.unavailable(e);
    }
  }

  /**
   * The `data` of a 200 answer that `valid` accepts. Any other answer (another
   * status, no data, a shape `valid` refuses) is a 503 for our own caller, like no
   * answer at all.
   */
  async data<T>(
    who: Caller,
    method: 'GET' | 'POST',
    path: string,
    valid: (data: unknown) => data is T,
    body?: unknown,
  ): Promise<T> {
    const found = await this.dataOrNull(who, method, path, valid, body);
    if (found === null) throw this.unavailable(new Error(`${method} ${path} answered 404`));
    return found;
  }

  /** As `data`, with a 404 answered as null (the record asked about does not exist). */
  async dataOrNull<T>(
    who: Caller,
    method: 'GET' | 'POST',
    path: string,
    valid: (data: unknown) => data is T,
    body?: unknown,
  ): Promise<T | null> {
    const res = await this.request<{ data?: unknown } | null>(who, method, path, body);
    if (res.status === 404) return null;
    const data = res.body?.data;
    if (res.status !== 200 || !valid(data))
      throw this.unavailable(new Error(`${method} ${path} answered ${res.status} without the expected data`));
    return data;
  }

  /** One page of another service's internal list endpoint (`path` without a query string). */
  async page<T>(who: Caller, path: string, q: ListQuery): Promise<{ items: T[]; total: number }> {
    const params = new URLSearchParams({
      page: String(q.page),
      limit: String(q.limit),
      ...(q.sort ? { sort: q.sort } : {}),
    });
    const res = await this.request<{ data?: unknown; pagination?: { total?: unknown } } | null>(
      who,
      'GET',
      `${path}?${params.toString()}`,
    );
    const items = res.body?.data;
    const total = res.body?.pagination?.total;
    if (res.status !== 200 || !Array.isArray(items) || typeof total !== 'number') {
      throw this.unavailable(new Error(`GET ${path} answered ${res.status} without a page`));
    }
    return { items: items as T[], total };
  }

  /** The 503 our caller gets when this service cannot answer as it should. */
  unavailable(cause: unknown) {
    return serviceUnavailable(`The ${this.opts.name} service is unavailable`, { cause });
  }
}

/** The codes of a connection refused, or dropped before any answer came. */
const CONNECTION_FAILURES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

/** fetch's "fetch failed" whose cause is a connection refused or dropped, not a timeout or an abort. */
function isConnectionFailure(e: unknown): boolean {
  const cause = (e as { cause?: { code?: unknown; errors?: { code?: unknown }[] } }).cause;
  if (!cause) return false;
  // Several addresses tried for one name: an AggregateError of each refusal.
  const codes = [cause.code, ...(cause.errors ?? []).map((x) => x.code)];
  return codes.some((c) => typeof c === 'string' && CONNECTION_FAILURES.has(c));
}

/** A JSON object (not an array, not null): the start of every answer check. */
export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
