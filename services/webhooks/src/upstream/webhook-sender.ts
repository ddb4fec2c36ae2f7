// One delivery attempt: an HTTPS POST through a keep-alive pool per origin, that
// connects only to addresses the UrlGuard allows at connect time, never follows
// redirects, and costs at most timeoutMs however the receiver behaves. Each POST is
// a CLIENT span of the trace the event came with, and carries it to the receiver in
// `traceparent` (W3C trace context).
import { isIP } from 'node:net';
import { Agent } from 'undici';
import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import { injectTraceHeaders } from '@lpm/shared/telemetry';
import { storableText } from '@lpm/shared/text';
import { hostOf, type UrlGuard } from './url-guard.ts';

export interface SendResult {
  ok: boolean;
  statusCode: number | null;
  latencyMs: number;
  /** null when ok; else timeout, connection_refused, connection_reset, tls, dns, blocked_address,
   *  invalid_url, network, redirect, http_4xx or http_5xx. */
  errorClass: string | null;
  /** The first 4 KiB of the response body, cut on a UTF-8 character boundary, without what the store refuses (storableText). */
  responseBody: string | null;
  /** A 429's or 503's Retry-After, in ms from now (seconds or an HTTP date); null when absent or unreadable. */
  retryAfterMs: number | null;
}

/** Retry-After as delay-seconds or an HTTP date, in ms from `now`. */
export function retryAfterMs(value: string | string[] | undefined, now = Date.now()): number | null {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return null;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

const MAX_RESPONSE_BYTES = 4096;
const tracer = trace.getTracer('webhooks');

/** OpenSSL certificate verification codes and Node's TLS / SSL error codes. */
const TLS_ERROR =
  /^(ERR_TLS_|ERR_SSL_|UNABLE_TO_|CERT_|CRL_|ERROR_IN_|DEPTH_ZERO_|SELF_SIGNED_|INVALID_CA$|INVALID_PURPOSE$|PATH_LENGTH_|HOSTNAME_MISMATCH$)/;

function errorCode(err: unknown): string {
  const e = err as { code?: unknown; cause?: { code?: unknown }; errors?: Array<{ code?: unknown }> };
  // Happy-eyeballs connects fail with an AggregateError of one error per address.
  const code = e?.code ?? e?.errors?.[0]?.code ?? e?.cause?.code;
  return typeof code === 'string' ? code : '';
}

function classify(err: unknown): string {
  const code = errorCode(err);
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
    case 'ETIMEDOUT':
      return 'timeout';
    case 'ECONNREFUSED':
      return 'connection_refused';
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
      return 'connection_reset';
    case 'EADDRBLOCKED':
      return 'blocked_address';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
    case 'EAI_NODATA':
    case 'EAI_NONAME':
      return 'dns';
  }
  return TLS_ERROR.test(code) ? 'tls' : 'network';
}

function statusClass(status: number): string | null {
  if (status >= 200 && status < 300) return null;
  if (status >= 300 && status < 400) return 'redirect';
  return status < 500 ? 'http_4xx' : 'http_5xx';
}

/** Reads up to `max` bytes; a longer body is cut there (on a character boundary) and the rest discarded. */
async function readCapped(body: AsyncIterable<Buffer>, max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  // Leaving the loop early destroys the stream, which closes that connection
  // rather than reading an unbounded body just to reuse it.
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size > max) break;
  }
  const all = Buffer.concat(chunks);
  if (all.length <= max) return all.toString('utf8');
  let end = max;
  // all[end] is the first byte left out: if it continues a character (10xxxxxx), leave out that character too.
  while (end > max - 3 && (all[end] & 0xc0) === 0x80) end--;
  return all.subarray(0, end).toString('utf8');
}

export class WebhookSender {
  private readonly guard: UrlGuard;
  private readonly timeoutMs: number;
  private readonly agent: Agent;

  constructor(opts: { guard: UrlGuard; timeoutMs: number; connectionsPerOrigin?: number }) {
    this.guard = opts.guard;
    this.timeoutMs = opts.timeoutMs;
    // An Agent keeps one pool per origin, so a slow receiver only queues its own deliveries; bounded, so a
    // burst to one origin reuses kept-alive connections rather than setting up a TLS session for each POST.
    this.agent = new Agent({
      connections: opts.connectionsPerOrigin ?? null,
      connect: { lookup: opts.guard.lookup, timeout: opts.timeoutMs },
    });
  }

  async send(url: string, body: string, headers: Record<string, string>): Promise<SendResult> {
    const started = performance.now();
    const result = (r: Partial<SendResult>): SendResult => ({
      ok: false,
      statusCode: null,
      errorClass: null,
      responseBody: null,
      retryAfterMs: null,
      ...r,
      latencyMs: Math.round(performance.now() - started),
    });

    let target: URL;
    try {
      target = this.guard.parse(url);
    } catch {
      return result({ errorClass: 'invalid_url' });
    }
    // Node skips `lookup` for IP literals, so those are checked here.
    const host = hostOf(target);
    if (isIP(host) && !this.guard.allows(host)) return result({ errorClass: 'blocked_address' });

    // One deadline for queueing, connecting, headers and body alike.
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), this.timeoutMs);
    let statusCode: number | null = null;
    // The receiver's host only: a webhook URL's path and query may hold the receiver's own secrets.
    const span = tracer.startSpan('webhook POST', {
      kind: SpanKind.CLIENT,
      attributes: { 'http.request.method': 'POST', 'server.address': host, 'server.port': Number(target.port) || 443 },
    });
    let sent: SendResult | undefined;
    try {
      const res = await this.agent.request({
        origin: target.origin,
        path: `${target.pathname}${target.search}`,
        method: 'POST',
        headers: injectTraceHeaders({ ...headers }, trace.setSpan(context.active(), span)),
        body,
        signal: deadline.signal,
      });
      statusCode = res.statusCode;
      // A receiver's bytes never reach the store raw: a NUL would fail the insert of every delivery grouped with its own.
      const responseBody = storableText(await readCapped(res.body, MAX_RESPONSE_BYTES));
      const errorClass = statusClass(statusCode);
      const after = statusCode === 429 || statusCode === 503 ? retryAfterMs(res.headers['retry-after']) : null;
      return (sent = result({ ok: errorClass === null, statusCode, errorClass, responseBody, retryAfterMs: after }));
    } catch (err) {
      return (sent = result({ statusCode, errorClass: deadline.signal.aborted ? 'timeout' : classify(err) }));
    } finally {
      clearTimeout(timer);
      if (statusCode !== null) span.setAttribute('http.response.status_code', statusCode);
      if (!sent?.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: sent?.errorClass ?? undefined });
      span.end();
    }
  }

  /** Waits for attempts in flight (each bounded by timeoutMs), then closes every connection. */
  async close(): Promise<void> {
    await this.agent.close();
  }
}
