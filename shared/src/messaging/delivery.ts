// The fate of one delivery: parse it, claim its id (dedupe), run the handler in a
// consumer span joined to the publisher's trace, and ack only once the outcome is
// safe. A failed handler's message is republished (confirmed) to `<queue>.retry`
// with its attempt counted up, or to `<queue>.dlq` once attempts run out; a body
// that is not a message of the consumer's kind goes to the DLQ at once.
// A transient failure (isTransientFailure: the store unavailable, a 503, a network
// error to a neighbour) is not counted toward maxAttempts: it is retried through
// `<queue>.delay.<ms>` with growing delays for as long as it lasts, up to retryForMs
// after the first transient failure of the current run, and only then dead-lettered.
import type { ConfirmChannel, ConsumeMessage } from 'amqplib';
import { SpanKind, SpanStatusCode, context, trace, type Context, type Span } from '@opentelemetry/api';
import { AppError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { isStoreError } from '../store/store-errors.ts';
import { extractTraceContext } from '../telemetry.ts';
import type { Dedupe } from './dedupe.ts';
import { readJson, type CarriedProperties, type Message, type ParseMessage } from './message.ts';
import { confirmPublish } from './publisher.ts';
import { countMessage, type MessageOutcome } from './queue-metrics.ts';

export interface DeliveryMeta {
  queue: string;
  routingKey: string;
  /** 1 on the first delivery, counted up by each retry (through `<queue>.retry` or a delay queue). */
  attempt: number;
  redelivered: boolean;
  headers: Record<string, unknown>;
}

export const ATTEMPT_HEADER = 'x-attempt';
export const LAST_ERROR_HEADER = 'x-last-error';
/** Failures counted toward maxAttempts (non-transient ones) so far. */
export const FAILURES_HEADER = 'x-failures';
/** Consecutive transient failures so far (picks the next delay of the schedule). */
export const TRANSIENT_HEADER = 'x-transient-failures';
/** When (ms since the epoch) the current run of transient failures began. */
export const TRANSIENT_SINCE_HEADER = 'x-transient-since';

/** The default growing delays of transient retries; the last repeats. */
export const TRANSIENT_DELAYS_MS = [1000, 5000, 15_000, 30_000, 60_000];
/** The default bound of transient retries (CONSUMER_RETRY_FOR). */
export const TRANSIENT_RETRY_FOR_MS = 24 * 3600_000;

/** Socket and DNS error codes of a neighbour that is down or unreachable, and undici's. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

/**
 * Another delivery holds the event's dedupe claim: it is being handled, or its
 * holder died (SIGKILL, a release the store refused) and the claim is taken over
 * once stale. Retried as long as that lasts, never counted toward maxAttempts: a
 * message dead-lettered here is an event its consumer never applies.
 */
export class ClaimBusy extends Error {
  constructor(eventId: string) {
    super(`event ${eventId} is being handled by another delivery`);
    this.name = 'ClaimBusy';
  }
}

/**
 * A failure that says nothing about the message: the store unavailable
 * (isStoreError), an AppError with status 503, a network error (by its code, or
 * fetch's "fetch failed" / an AbortSignal timeout), another delivery's dedupe claim
 * (ClaimBusy), through up to 5 wrapping causes. The first AppError met decides by
 * its status (a 404 caused by anything is not transient).
 */
export function isTransientFailure(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; e && depth < 5; depth++) {
    if (e instanceof ClaimBusy) return true;
    if (e instanceof AppError) return e.status === 503;
    if (isStoreError(e)) return true;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
    if (e instanceof Error && (e.name === 'TimeoutError' || (e.name === 'TypeError' && e.message === 'fetch failed')))
      return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** The delay queue of a transient retry: queue-level TTL, dead-lettering back into `queue` (as Broker.publishDelayed). */
export const delayQueueName = (queue: string, delayMs: number) => `${queue}.delay.${delayMs}`;

const DEATH_HEADERS = [
  'x-death',
  'x-first-death-exchange',
  'x-first-death-queue',
  'x-first-death-reason',
  'x-last-death-exchange',
  'x-last-death-queue',
  'x-last-death-reason',
];

export interface DeliveryHandling<M extends Message> {
  queue: string;
  maxAttempts: number;
  handler: (message: M, meta: DeliveryMeta) => Promise<void>;
  dedupe?: Dedupe;
  /** Which messages take a dedupe claim (default every one). */
  dedupeWhen?: (message: M) => boolean;
  parse: ParseMessage<M>;
  log: Logger;
  publishTimeoutMs: number;
  /** Delays of transient retries, in order; the last repeats. Each has its declared `<queue>.delay.<ms>`. */
  transientDelaysMs: number[];
  /** How long after the first of a run of transient failures they are retried before the DLQ. */
  retryForMs: number;
  isTransient: (err: unknown) => boolean;
  now?: () => number;
}

/** Handles `msg` and acks it; when its forward to retry/DLQ fails it rejects, and the unacked message is redelivered. */
export async function handleDelivery<M extends Message>(
  h: DeliveryHandling<M>,
  ch: ConfirmChannel,
  msg: ConsumeMessage,
): Promise<void> {
  const { queue } = h;
  const headers: Record<string, unknown> = { ...(msg.properties.headers ?? {}) };
  const attempt = Math.max(1, Number(headers[ATTEMPT_HEADER]) || 1);
  let event: M;
  try {
    event = h.parse(readJson(msg.content));
  } catch (err) {
    const carried: CarriedProperties = msg.properties;
    h.log.error({ err, queue, messageId: carried.messageId }, 'unparseable message sent to the DLQ');
    await forward(ch, `${queue}.dlq`, msg, headers, attempt, (err as Error).message, h.publishTimeoutMs);
    ch.ack(msg);
    countMessage(queue, 'dead_lettered');
    return;
  }
  const parent = extractTraceContext(headers);
  const span = startConsumerSpan(queue, msg, event.id, attempt, parent);
  const meta: DeliveryMeta = {
    queue,
    routingKey: msg.fields.routingKey,
    attempt,
    redelivered: msg.fields.redelivered,
    headers,
  };
  let outcome: MessageOutcome = 'acked';
  const dedupe = h.dedupe && (h.dedupeWhen?.(event) ?? true) ? h.dedupe : undefined;
  try {
    await context.with(trace.setSpan(parent, span), runOnce, undefined, h.handler, event, meta, dedupe, span);
  } catch (err) {
    span.recordException(err as Error);
    span.setStatus({ code: SpanStatusCode.ERROR });
    const message = err instanceof Error ? err.message : String(err);
    const next = nextAfterFailure(h, headers, attempt, event, err);
    await forward(ch, next.target, msg, headers, next.attempt, message, h.publishTimeoutMs, next.counters);
    outcome = next.outcome;
  } finally {
    span.end();
  }
  ch.ack(msg);
  countMessage(queue, outcome);
}

function startConsumerSpan(
  queue: string,
  msg: ConsumeMessage,
  eventId: string,
  attempt: number,
  parent: Context,
): Span {
  return trace.getTracer('lpm-broker').startSpan(
    `process ${queue}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        'messaging.system': 'rabbitmq',
        'messaging.operation.type': 'process',
        'messaging.destination.name': queue,
        'messaging.rabbitmq.destination.routing_key': msg.fields.routingKey,
        'messaging.message.id': eventId,
        'messaging.consumer.attempt': attempt,
      },
    },
    parent,
  );
}

/** Runs the handler once the event's dedupe claim is taken; a duplicate is skipped, a busy claim throws ClaimBusy. */
async function runOnce<M extends Message>(
  handler: DeliveryHandling<M>['handler'],
  event: M,
  meta: DeliveryMeta,
  dedupe: Dedupe | undefined,
  span: Span,
): Promise<void> {
  const claim = dedupe ? await dedupe.claim(event.id) : 'new';
  if (claim === 'done') {
    span.setAttribute('messaging.duplicate', true);
    return;
  }
  if (claim === 'busy') throw new ClaimBusy(event.id);
  try {
    await handler(event, meta);
  } catch (err) {
    await dedupe?.release(event.id).catch(() => {});
    throw err;
  }
  await dedupe?.complete(event.id);
}

interface NextAfterFailure {
  target: string;
  attempt: number;
  counters: Record<string, number>;
  outcome: MessageOutcome;
}

/** Where a failed message goes (a delay queue, `<queue>.retry` or the DLQ) with its counters, logged. */
function nextAfterFailure<M extends Message>(
  h: DeliveryHandling<M>,
  headers: Record<string, unknown>,
  attempt: number,
  event: M,
  err: unknown,
): NextAfterFailure {
  const { queue, log } = h;
  const now = (h.now ?? Date.now)();
  const failures = counter(headers[FAILURES_HEADER], attempt - 1);
  const transientRun = counter(headers[TRANSIENT_HEADER], 0);
  const since = counter(headers[TRANSIENT_SINCE_HEADER], now) || now;
  let transient = false;
  try {
    transient = h.isTransient(err);
  } catch {
    transient = false;
  }
  if (transient && now - (transientRun > 0 ? since : now) < h.retryForMs) {
    const delays = h.transientDelaysMs;
    const delay = delays[Math.min(transientRun, delays.length - 1)];
    log.warn(
      { err, queue, eventId: event.id, type: event.type, attempt, delayMs: delay },
      'handler failed transiently; retry scheduled',
    );
    return {
      target: delayQueueName(queue, delay),
      attempt: attempt + 1,
      counters: {
        [FAILURES_HEADER]: failures,
        [TRANSIENT_HEADER]: transientRun + 1,
        [TRANSIENT_SINCE_HEADER]: transientRun > 0 ? since : now,
      },
      outcome: 'retried',
    };
  }
  // A transient failure past retryForMs counts as the last one.
  const dead = transient || failures + 1 >= h.maxAttempts;
  log.warn(
    { err, queue, eventId: event.id, type: event.type, attempt },
    dead ? 'handler failed for the last time; message sent to the DLQ' : 'handler failed; retry scheduled',
  );
  return {
    target: dead ? `${queue}.dlq` : `${queue}.retry`,
    attempt: dead ? attempt : attempt + 1,
    counters: { [FAILURES_HEADER]: failures + 1, [TRANSIENT_HEADER]: 0 },
    outcome: dead ? 'dead_lettered' : 'retried',
  };
}

/** Republishes msg to a queue (default exchange) and waits for the confirm. */
function forward(
  ch: ConfirmChannel,
  target: string,
  msg: ConsumeMessage,
  headers: Record<string, unknown>,
  attempt: number,
  error: string,
  timeoutMs: number,
  counters: Record<string, number> = {},
): Promise<void> {
  const fwd: Record<string, unknown> = {
    ...headers,
    ...counters,
    [ATTEMPT_HEADER]: attempt,
    [LAST_ERROR_HEADER]: error.slice(0, 1000),
  };
  for (const k of DEATH_HEADERS) delete fwd[k];
  if (counters[TRANSIENT_HEADER] === 0) delete fwd[TRANSIENT_SINCE_HEADER];
  const p: CarriedProperties = msg.properties;
  return confirmPublish(
    ch,
    '',
    target,
    msg.content,
    {
      persistent: true,
      // The retry queue or DLQ gone: the original stays unacked rather than being acked after a drop.
      mandatory: true,
      headers: fwd,
      ...(p.contentType ? { contentType: p.contentType } : {}),
      ...(p.type ? { type: p.type } : {}),
      ...(p.messageId ? { messageId: p.messageId } : {}),
      ...(p.timestamp ? { timestamp: p.timestamp } : {}),
    },
    timeoutMs,
  );
}

/** A non-negative integer header, or `fallback` when missing or not one. */
function counter(value: unknown, fallback: number): number {
  const n = Number(value);
  return value !== undefined && value !== null && Number.isSafeInteger(n) && n >= 0 ? n : fallback;
}
