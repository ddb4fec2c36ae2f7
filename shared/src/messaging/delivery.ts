// The fate of one delivery: parse it, claim its id (dedupe), run the handler in a
// consumer span joined to the publisher's trace, and ack only once the outcome is
// safe. A failed handler's message is republished (confirmed) to `<queue>.retry`
// with its attempt counted up, or to `<queue>.dlq` once attempts run out; a body
// that is not a message of the consumer's kind goes to the DLQ at once.
import type { ConfirmChannel, ConsumeMessage } from 'amqplib';
import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import type { Logger } from '../logger.ts';
import { extractTraceContext } from '../telemetry.ts';
import type { Dedupe } from './dedupe.ts';
import { readJson, type Message, type ParseMessage } from './message.ts';
import { confirmPublish } from './publisher.ts';

export interface DeliveryMeta {
  queue: string;
  routingKey: string;
  /** 1 on the first delivery, counted up by each retry through `<queue>.retry`. */
  attempt: number;
  redelivered: boolean;
  headers: Record<string, unknown>;
}

export const ATTEMPT_HEADER = 'x-attempt';
export const LAST_ERROR_HEADER = 'x-last-error';

const DEATH_HEADERS = ['x-death', 'x-first-death-exchange', 'x-first-death-queue', 'x-first-death-reason', 'x-last-death-exchange', 'x-last-death-queue', 'x-last-death-reason'];

export interface DeliveryHandling<M extends Message> {
  queue: string;
  maxAttempts: number;
  handler: (message: M, meta: DeliveryMeta) => Promise<void>;
  dedupe?: Dedupe;
  parse: ParseMessage<M>;
  log: Logger;
  publishTimeoutMs: number;
}

/** Handles `msg` and acks it; when its forward to retry/DLQ fails it rejects, and the unacked message is redelivered. */
export async function handleDelivery<M extends Message>(h: DeliveryHandling<M>, ch: ConfirmChannel, msg: ConsumeMessage): Promise<void> {
  const { queue, maxAttempts, handler, dedupe, log } = h;
  const headers: Record<string, unknown> = { ...(msg.properties.headers ?? {}) };
  const attempt = Math.max(1, Number(headers[ATTEMPT_HEADER]) || 1);
  let event: M;
  try {
    event = h.parse(readJson(msg.content));
  } catch (err) {
    log.error({ err, queue, messageId: msg.properties.messageId }, 'unparseable message sent to the DLQ');
    await forward(ch, `${queue}.dlq`, msg, headers, attempt, (err as Error).message, h.publishTimeoutMs);
    ch.ack(msg);
    return;
  }
  const parent = extractTraceContext(headers);
  const span = trace.getTracer('lpm-broker').startSpan(
    `process ${queue}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        'messaging.system': 'rabbitmq',
        'messaging.operation.type': 'process',
        'messaging.destination.name': queue,
        'messaging.rabbitmq.destination.routing_key': msg.fields.routingKey,
        'messaging.message.id': event.id,
        'messaging.consumer.attempt': attempt,
      },
    },
    parent,
  );
  const meta: DeliveryMeta = {
    queue,
    routingKey: msg.fields.routingKey,
    attempt,
    redelivered: msg.fields.redelivered,
    headers,
  };
  try {
    await context.with(trace.setSpan(parent, span), async () => {
      const claim = dedupe ? await dedupe.claim(event.id) : 'new';
      if (claim === 'done') {
        span.setAttribute('messaging.duplicate', true);
        return;
      }
      if (claim === 'busy') throw new Error(`event ${event.id} is being handled by another delivery`);
      try {
        await handler(event, meta);
      } catch (err) {
        await dedupe?.release(event.id).catch(() => {});
        throw err;
      }
      await dedupe?.complete(event.id);
    });
  } catch (err) {
    span.recordException(err as Error);
    span.setStatus({ code: SpanStatusCode.ERROR });
    const dead = attempt >= maxAttempts;
    log.warn(
      { err, queue, eventId: event.id, type: event.type, attempt },
      dead ? 'handler failed for the last time; message sent to the DLQ' : 'handler failed; retry scheduled',
    );
    const message = err instanceof Error ? err.message : String(err);
    await forward(ch, dead ? `${queue}.dlq` : `${queue}.retry`, msg, headers, dead ? attempt : attempt + 1, message, h.publishTimeoutMs);
  } finally {
    span.end();
  }
  ch.ack(msg);
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
): Promise<void> {
  const fwd: Record<string, unknown> = { ...headers, [ATTEMPT_HEADER]: attempt, [LAST_ERROR_HEADER]: error.slice(0, 1000) };
  for (const k of DEATH_HEADERS) delete fwd[k];
  const p = msg.properties;
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
