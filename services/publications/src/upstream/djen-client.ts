// The Comunica API of the DJEN, read as its operators ask: one request at a time, a
// User-Agent with the operator's contact, a pause when x-ratelimit-remaining reaches 0,
// a minute's wait after a 429, and a bounded backoff on 5xx and time-outs, after which
// the poll stops and resumes later where it stopped (it never loops on errors).
import { setTimeout as delay } from 'node:timers/promises';
import { backoffDelayMs } from '@lpm/shared/backoff';
import { isObject } from '@lpm/shared/upstream/service-client';
import { readDjenItem, type DjenItem } from './djen-items.ts';

export interface DjenWaits {
  /** After a 429 (the operators ask for one minute). */
  afterRateLimitMs: number;
  /** When an answer says x-ratelimit-remaining: 0. */
  remainingZeroMs: number;
  /** Backoff on 5xx and time-outs: the first wait, doubled up to the cap. */
  backoff: { firstMs: number; maxMs: number };
}

export const DEFAULT_DJEN_WAITS: DjenWaits = {
  afterRateLimitMs: 60_000,
  remainingZeroMs: 60_000,
  backoff: { firstMs: 5_000, maxMs: 60_000 },
};

export interface DjenClientOptions {
  baseUrl: string;
  userAgent: string;
  waits?: DjenWaits;
  /** Attempts of one request before the poll gives up for now. Default 5. */
  attempts?: number;
  timeoutMs?: number;
}

export interface DjenPage {
  items: DjenItem[];
  /** Items the API counts for the whole query. */
  count: number;
  /** Items of the page that could not be read (no id, hash or date). */
  unreadable: number;
}

export interface DjenQuery {
  oab_number: string;
  oab_uf: string;
  day: string;
  page: number;
}

export const PAGE_SIZE = 100;

/** The API did not answer as it should within the attempts: the poll stops here and resumes later. */
export class DjenUnavailable extends Error {}

export class DjenClient {
  private readonly opts: DjenClientOptions;
  private readonly waits: DjenWaits;
  /** One request at a time in this process (the poll lease makes it one in the deployment). */
  private queue: Promise<unknown> = Promise.resolve();
  private pausedUntil = 0;

  constructor(opts: DjenClientOptions) {
    this.opts = opts;
    this.waits = opts.waits ?? DEFAULT_DJEN_WAITS;
  }

  /** One page of one day's communications of one lawyer. */
  page(q: DjenQuery, signal?: AbortSignal): Promise<DjenPage> {
    const run = this.queue.then(() => this.withAttempts(q, signal));
    this.queue = run.catch(() => {});
    return run;
  }

  private async withAttempts(q: DjenQuery, signal?: AbortSignal): Promise<DjenPage> {
    const attempts = this.opts.attempts ?? 5;
    let last = '';
    for (let attempt = 0; attempt < attempts; attempt++) {
      const wait = this.pausedUntil - Date.now();
      if (wait > 0) await delay(wait, undefined, { signal });
      const answer = await this.once(q).catch((e: unknown) => ({ status: 0, error: String(e) }) as const);
      if ('page' in answer) return answer.page;
      last = 'error' in answer ? answer.error : `status ${answer.status}`;
      if (answer.status === 429) this.pausedUntil = Date.now() + this.waits.afterRateLimitMs;
      else if (answer.status === 0 || answer.status >= 500)
        this.pausedUntil = Date.now() + backoffDelayMs(attempt, this.waits.backoff);
      else throw new DjenUnavailable(`GET /comunicacao answered ${answer.status}`);
    }
    throw new DjenUnavailable(`GET /comunicacao failed ${attempts} times (last: ${last})`);
  }

  private async once(q: DjenQuery): Promise<{ page: DjenPage } | { status: number }> {
    const url = new URL(`${this.opts.baseUrl.replace(/\/$/, '')}/comunicacao`);
    const params = {
      numeroOab: q.oab_number,
      ufOab: q.oab_uf,
      dataDisponibilizacaoInicio: q.day,
      dataDisponibilizacaoFim: q.day,
      pagina: String(q.page),
      itensPorPagina: String(PAGE_SIZE),
    };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    const res = await fetch(url, {
      headers: { 'user-agent': this.opts.userAgent, accept: 'application/json' },
      signal: AbortSignal.timeout(this.opts.timeoutMs ?? 30_000),
    });
    const remaining = res.headers.get('x-ratelimit-remaining');
    if (remaining !== null && Number(remaining) <= 0) this.pausedUntil = Date.now() + this.waits.remainingZeroMs;
    if (res.status !== 200) {
      await res.body?.cancel();
      return { status: res.status };
    }
    const body: unknown = await res.json().catch(() => null);
    if (!isObject(body) || !Array.isArray(body.items)) return { status: 502 };
    const items = body.items.map(readDjenItem);
    const read = items.filter((i): i is DjenItem => i !== null);
    return {
      page: {
        items: read,
        count: typeof body.count === 'number' ? body.count : read.length,
        unreadable: items.length - read.length,
      },
    };
  }
}
