// Publishing that the caller can trust: every message waits for its publisher
// confirm (or fails, so the caller keeps it, e.g. in the outbox), inside a producer
// span whose context travels in the headers, so the consumer's span joins the trace.
// A message goes to the topic exchange, straight into a queue, or into a delay
// queue that hands it to the queue once its TTL has run out. A message put into a
// queue is `mandatory`: when no queue takes it the broker returns it (basic.return)
// and the publish fails, rather than the broker dropping it after a confirm. A
// domain event to the exchange is mandatory too: one that no queue is bound for yet
// (a first deploy, a consumer's new binding) is parked in `<exchange>.unrouted`,
// which `admin dlq list|replay` reads and publishes back to the exchange.
import type { ChannelModel, ConfirmChannel, Message, Options } from 'amqplib';
import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import { injectTraceHeaders } from '../telemetry.ts';
import type { Connection } from './connection.ts';
import type { OutgoingMessage } from './message.ts';
import {
  declareQueues,
  delayQueueArguments,
  holdingQueueArguments,
  mainQueueArguments,
  type QueueArguments,
} from './queues.ts';

export interface PublisherOptions {
  exchange: string;
  /** How long a publish waits for the broker's confirm. */
  timeoutMs: number;
}

export class Publisher {
  private readonly connection: Connection;
  private readonly opts: PublisherOptions;
  /** Queues declared per connection: each is asserted once per connection. */
  private readonly declared = new WeakMap<ChannelModel, Map<string, Promise<unknown>>>();

  constructor(connection: Connection, opts: PublisherOptions) {
    this.connection = connection;
    this.opts = opts;
  }

  /** To the exchange, routing key = the message's type; parked when no queue takes it. */
  async publish(msg: OutgoingMessage): Promise<void> {
    const ch = this.connection.publishChannel;
    try {
      await this.send(ch, msg, this.opts.exchange, msg.type);
    } catch (err) {
      if (!(ch && (err as Error).cause instanceof Unroutable)) throw err;
      const parking = parkingQueue(this.opts.exchange);
      try {
        await this.declareOn(parking, holdingQueueArguments());
      } catch (e) {
        throw new Error(`publish of ${msg.type} ${msg.id} to ${parking} failed`, { cause: e });
      }
      await this.send(this.connection.publishChannel, msg, '', parking);
    }
  }

  /** Straight into `queue` through the default exchange; rejects when `queue` does not exist (mandatory). */
  toQueue(msg: OutgoingMessage, queue: string): Promise<void> {
    return this.send(this.connection.publishChannel, msg, '', queue);
  }

  /**
   * Declares `queue` with the arguments a consumer declares it with, once per
   * connection; not connected: nothing to do (the publish that follows rejects).
   */
  async declare(queue: string): Promise<void> {
    if (!this.connection.publishChannel) return;
    try {
      await this.declareOn(queue, mainQueueArguments(queue));
    } catch (err) {
      throw new Error(`declaring queue ${queue} failed`, { cause: err });
    }
  }

  /** Into `queue` after `delayMs`, through `<queue>.delay.<ms>` (see Broker.publishDelayed). */
  async delayed(msg: OutgoingMessage, queue: string, delayMs: number): Promise<void> {
    if (!Number.isSafeInteger(delayMs) || delayMs < 0)
      throw new RangeError(`delayMs must be a non-negative integer: ${delayMs}`);
    const ch = this.connection.publishChannel;
    const delayQueue = `${queue}.delay.${delayMs}`;
    // Not connected: send() rejects as publish() does.
    if (ch) {
      try {
        await this.declareOn(delayQueue, delayQueueArguments(queue, delayMs));
      } catch (err) {
        throw new Error(`publish of ${msg.type} ${msg.id} to ${delayQueue} failed`, { cause: err });
      }
    }
    await this.send(ch, msg, '', delayQueue);
  }

  /** Declares `queue` (queues.ts: on a channel of its own) unless done before on the current connection. */
  private declareOn(queue: string, args: QueueArguments): Promise<unknown> {
    const conn = this.connection.current;
    if (!conn) return Promise.reject(new Error('broker not connected', { cause: this.connection.lastError }));
    let onConnection = this.declared.get(conn);
    if (!onConnection) this.declared.set(conn, (onConnection = new Map<string, Promise<unknown>>()));
    let declared = onConnection.get(queue);
    if (!declared) {
      declared = declareQueues(conn, [{ name: queue, arguments: args }]);
      // A refused declaration is asked again by the next publish.
      declared.catch(() => onConnection.delete(queue));
      onConnection.set(queue, declared);
    }
    return declared;
  }

  /** Publishes on `ch` (the publish channel when the call began) and waits for the confirm, in a producer span. */
  private async send(
    ch: ConfirmChannel | null,
    msg: OutgoingMessage,
    exchange: string,
    routingKey: string,
  ): Promise<void> {
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
      const options: Options.Publish = {
        persistent: true,
        messageId: msg.id,
        type: msg.type,
        contentType: 'application/json',
        timestamp: Math.floor(Date.parse(msg.created_at) / 1000) || undefined,
        headers,
        // No queue to take it is a failure (or, from the exchange, a parking), never a silent drop.
        mandatory: true,
      };
      const content = Buffer.from(JSON.stringify(msg));
      const deadline = Date.now() + this.opts.timeoutMs;
      for (;;) {
        try {
          await confirmPublish(ch, exchange, routingKey, content, options, Math.max(1, deadline - Date.now()));
          break;
        } catch (err) {
          // The connection went before the confirm (its node lost): the broker may or may not
          // hold the message, so it is sent again on the next connection (consumers skip
          // a duplicate by its id), within the same wait for a confirm.
          // Unconfirmed for the whole wait: later publishes go on a new channel (Connection.renewPublishChannel).
          if (err instanceof ConfirmTimeout) void this.connection.renewPublishChannel(ch);
          if (this.connection.publishChannel === ch || err instanceof Unroutable || this.connection.closed) throw err;
          await this.connection.waitFor(Math.max(1, deadline - Date.now())).catch(() => {
            throw err;
          });
          ch = this.connection.publishChannel!;
          span.addEvent('resent on a new connection');
        }
      }
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw new Error(`publish of ${msg.type} ${msg.id}${exchange ? '' : ` to ${routingKey}`} failed`, { cause: err });
    } finally {
      span.end();
    }
  }
}

/** Where events that no queue is bound for wait for `admin dlq replay` (their routing key is their type). */
export const parkingQueue = (exchange: string) => `${exchange}.unrouted`;

/** The broker gave a mandatory publish back: no queue took it. */
export class Unroutable extends Error {
  override readonly name = 'Unroutable';
}

/** The broker neither confirmed nor refused a publish in time. */
export class ConfirmTimeout extends Error {
  override readonly name = 'ConfirmTimeout';
}

/** A mandatory publish waiting for its confirm; `returned` says why the broker gave it back. */
interface Pending {
  returned: string | null;
}

/** Mandatory publishes in flight per channel, by messageId. */
const pendingReturns = new WeakMap<ConfirmChannel, Map<string, Set<Pending>>>();

/**
 * The in-flight mandatory publishes of `ch`, listening for its returns once. The
 * broker sends basic.return before the confirm of the same message (an unroutable
 * message is confirmed too), so the confirm callback sees whether it came back. A
 * return names no delivery tag, so it marks every publish in flight with its
 * messageId: two at once with one id (not done here) would both fail, never both pass.
 */
function returnsOf(ch: ConfirmChannel): Map<string, Set<Pending>> {
  let byId = pendingReturns.get(ch);
  if (!byId) {
    const map = new Map<string, Set<Pending>>();
    pendingReturns.set(ch, map);
    ch.on('return', (msg: Message) => {
      // A return's fields are basic.return's (replyCode, replyText), not a delivery's.
      const fields = msg.fields as unknown as { replyCode?: number; replyText?: string };
      const why = `${fields.replyCode ?? ''} ${fields.replyText ?? ''}`.trim() || 'unroutable';
      for (const p of map.get(String(msg.properties.messageId ?? '')) ?? []) p.returned = why;
    });
    byId = map;
  }
  return byId;
}

/**
 * Publishes on a confirm channel; resolves on the broker's ack, rejects on a nack,
 * an error or no confirm within timeoutMs, and, with `mandatory`, when the broker
 * returns the message because no queue took it.
 */
export function confirmPublish(
  ch: ConfirmChannel,
  exchange: string,
  routingKey: string,
  content: Buffer,
  options: Options.Publish,
  timeoutMs: number,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let untrack = () => {};
    let pending: Pending | null = null;
    if (options.mandatory) {
      const byId = returnsOf(ch);
      const id = String(options.messageId ?? '');
      const mine: Pending = { returned: null };
      pending = mine;
      const set = byId.get(id) ?? new Set<Pending>();
      byId.set(id, set.add(mine));
      untrack = () => {
        set.delete(mine);
        if (set.size === 0 && byId.get(id) === set) byId.delete(id);
      };
    }
    const timer = setTimeout(() => {
      untrack();
      reject(new ConfirmTimeout(`no publisher confirm within ${timeoutMs} ms`));
    }, timeoutMs);
    try {
      // The return value is only back-pressure; the confirm is what counts.
      ch.publish(exchange, routingKey, content, options, (err: unknown) => {
        clearTimeout(timer);
        untrack();
        if (err) reject(err instanceof Error ? err : new Error('message nacked by the broker', { cause: err }));
        else if (pending?.returned != null)
          reject(new Unroutable(`message returned by the broker: ${pending.returned} (routing key ${routingKey})`));
        else resolve();
      });
    } catch (err) {
      clearTimeout(timer);
      untrack();
      reject(err instanceof Error ? err : new Error('publish failed', { cause: err }));
    }
  });
}
