// Publishing that the caller can trust: every message waits for its publisher
// confirm (or fails, so the caller keeps it, e.g. in the outbox), inside a producer
// span whose context travels in the headers, so the consumer's span joins the trace.
// A message goes to the topic exchange, straight into a queue, or into a delay
// queue that hands it to the queue once its TTL has run out.
import type { ConfirmChannel, Options } from 'amqplib';
import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import { injectTraceHeaders } from '../telemetry.ts';
import type { Connection } from './connection.ts';
import type { OutgoingMessage } from './message.ts';

export interface PublisherOptions {
  exchange: string;
  /** How long a publish waits for the broker's confirm. */
  timeoutMs: number;
}

export class Publisher {
  private readonly connection: Connection;
  private readonly opts: PublisherOptions;
  /** Delay queues declared per publish channel (so per connection): each is asserted once per connection. */
  private readonly delayQueues = new WeakMap<ConfirmChannel, Map<string, Promise<unknown>>>();

  constructor(connection: Connection, opts: PublisherOptions) {
    this.connection = connection;
    this.opts = opts;
  }

  /** To the exchange, routing key = the message's type. */
  publish(msg: OutgoingMessage): Promise<void> {
    return this.send(this.connection.publishChannel, msg, this.opts.exchange, msg.type);
  }

  /** Straight into `queue` through the default exchange. */
  toQueue(msg: OutgoingMessage, queue: string): Promise<void> {
    return this.send(this.connection.publishChannel, msg, '', queue);
  }

  /** Into `queue` after `delayMs`, through `<queue>.delay.<ms>` (see Broker.publishDelayed). */
  async delayed(msg: OutgoingMessage, queue: string, delayMs: number): Promise<void> {
    if (!Number.isSafeInteger(delayMs) || delayMs < 0) throw new RangeError(`delayMs must be a non-negative integer: ${delayMs}`);
    const ch = this.connection.publishChannel;
    const delayQueue = `${queue}.delay.${delayMs}`;
    // Not connected: send() rejects as publish() does.
    if (ch) {
      let declaredOnChannel = this.delayQueues.get(ch);
      if (!declaredOnChannel) this.delayQueues.set(ch, (declaredOnChannel = new Map()));
      let declared = declaredOnChannel.get(delayQueue);
      if (!declared) {
        declared = ch.assertQueue(delayQueue, {
          durable: true,
          arguments: { 'x-message-ttl': delayMs, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': queue },
        });
        // A refused declaration closes the channel and so the connection: the next connection declares again.
        declaredOnChannel.set(delayQueue, declared);
      }
      try {
        await declared;
      } catch (err) {
        throw new Error(`publish of ${msg.type} ${msg.id} to ${delayQueue} failed`, { cause: err });
      }
    }
    await this.send(ch, msg, '', delayQueue);
  }

  /** Publishes on `ch` (the publish channel when the call began) and waits for the confirm, in a producer span. */
  private async send(ch: ConfirmChannel | null, msg: OutgoingMessage, exchange: string, routingKey: string): Promise<void> {
    const destination = exchange || routingKey;
    const span = trace.getTracer('lpm-broker').startSpan(`publish ${destination}`, {
      kind: SpanKind.PRODUCER,
      attributes: {
        'messaging.system': 'rabbitmq',
        'messaging.operation.type': 'send',
        'messaging.destination.name': destination,
        'messaging.rabbitmq.destination.routing_key': routingKey,
        'messaging.message.id': msg.id,
      },
    });
    try {
      if (!ch) throw new Error('broker not connected', { cause: this.connection.lastError });
      const headers = injectTraceHeaders({}, trace.setSpan(context.active(), span));
      await confirmPublish(
        ch,
        exchange,
        routingKey,
        Buffer.from(JSON.stringify(msg)),
        {
          persistent: true,
          messageId: msg.id,
          type: msg.type,
          contentType: 'application/json',
          timestamp: Math.floor(Date.parse(msg.created_at) / 1000) || undefined,
          headers,
        },
        this.opts.timeoutMs,
      );
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw new Error(`publish of ${msg.type} ${msg.id}${exchange ? '' : ` to ${routingKey}`} failed`, { cause: err });
    } finally {
      span.end();
    }
  }
}

/** Publishes on a confirm channel; resolves on the broker's ack, rejects on a nack, an error or no confirm within timeoutMs. */
export function confirmPublish(
  ch: ConfirmChannel,
  exchange: string,
  routingKey: string,
  content: Buffer,
  options: Options.Publish,
  timeoutMs: number,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no publisher confirm within ${timeoutMs} ms`)), timeoutMs);
    try {
      // The return value is only back-pressure; the confirm is what counts.
      ch.publish(exchange, routingKey, content, options, (err: unknown) => {
        clearTimeout(timer);
        if (err) reject(err instanceof Error ? err : new Error('message nacked by the broker', { cause: err }));
        else resolve();
      });
    } catch (err) {
      clearTimeout(timer);
      reject(err);
    }
  });
}
