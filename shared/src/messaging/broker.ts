// One small class over amqplib: a connection kept up in the background (capped
// exponential backoff), a confirm channel for publishing domain events to a durable
// topic exchange (or straight into a queue, at once or through a delay queue), and
// consumers with bounded retries through a per-queue delay queue and a dead-letter
// queue. Channels stay inside.
import {
  connect as amqpConnect,
  type ChannelModel,
  type ConfirmChannel,
  type ConsumeMessage,
  type Options,
} from 'amqplib';
import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import type { Db } from 'mongodb';
import type { DomainEvent } from '../events.ts';
import type { Logger } from '../logger.ts';
import { extractTraceContext, injectTraceHeaders } from '../telemetry.ts';

export interface BrokerOptions {
  url: string;
  /** Durable topic exchange that carries the domain events (routing key = event type). */
  exchange: string;
  logger: Logger;
  connectionName?: string;
  /** How long publish() waits for the broker's confirm. Default 5000. */
  publishTimeoutMs?: number;
  /** Reconnect backoff: first delay, doubled per failed attempt up to the cap. Defaults 200 / 10000. */
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
}

export interface DeliveryMeta {
  queue: string;
  routingKey: string;
  /** 1 on the first delivery, counted up by each retry through `<queue>.retry`. */
  attempt: number;
  redelivered: boolean;
  headers: Record<string, unknown>;
}

/**
 * Idempotency store for a consumer. A delivery claims its event id before the
 * handler runs, so two deliveries of one event at the same moment (redelivery
 * racing a retry, two replicas) never both run it.
 */
export interface Dedupe {
  /** 'new': this delivery owns the event; 'done': handled before; 'busy': another delivery is handling it now. */
  claim(eventId: string): Promise<'new' | 'done' | 'busy'>;
  complete(eventId: string): Promise<void>;
  /** Gives the claim up after a failed handler, so a retry can claim it again. */
  release(eventId: string): Promise<void>;
}

/** A claim older than this is taken over: its holder died mid-handler. */
const CLAIM_STALE_MS = 60_000;

export interface ConsumeOptions {
  queue: string;
  /** Routing patterns bound to the exchange, e.g. `client.*` or `#`. */
  bindings: string[];
  handler: (event: DomainEvent, meta: DeliveryMeta) => Promise<void>;
  /** Unacked messages in flight (handlers run concurrently up to this). Default 10. */
  prefetch?: number;
  /** Deliveries before a failing message goes to `<queue>.dlq`. Default 5. */
  maxAttempts?: number;
  /**
   * Delay before a retry (the `x-message-ttl` of `<queue>.retry`). Default 1000.
   * A queue's arguments cannot change once declared: changing this needs the
   * retry queue deleted first.
   */
  retryDelayMs?: number;
  dedupe?: Dedupe;
}

export interface ConsumerHandle {
  readonly queue: string;
  /** Stops deliveries and waits for the handlers in flight. */
  cancel(): Promise<void>;
}

export const ATTEMPT_HEADER = 'x-attempt';
export const LAST_ERROR_HEADER = 'x-last-error';

interface ConsumerState {
  opts: ConsumeOptions & { prefetch: number; maxAttempts: number; retryDelayMs: number };
  channel: ConfirmChannel | null;
  tag: string | null;
  starting: boolean;
  cancelled: boolean;
  retryTimer: NodeJS.Timeout | null;
  retries: number;
  inflight: Set<Promise<void>>;
}

/** AMQP replies that will not change on retry: ACCESS_REFUSED, NOT_FOUND, RESOURCE_LOCKED, PRECONDITION_FAILED. */
const SETUP_REFUSALS = new Set([403, 404, 405, 406]);

const DEATH_HEADERS = ['x-death', 'x-first-death-exchange', 'x-first-death-queue', 'x-first-death-reason', 'x-last-death-exchange', 'x-last-death-queue', 'x-last-death-reason'];

export class Broker {
  private readonly opts: Required<Omit<BrokerOptions, 'connectionName'>> & { connectionName?: string };
  private readonly log: Logger;
  private conn: ChannelModel | null = null;
  private pub: ConfirmChannel | null = null;
  /** Declarations of delay queues on the current connection (publishDelayed): each is asserted once per connection. */
  private delayQueues = new Map<string, Promise<unknown>>();
  private closed = false;
  private down = false;
  private lastError: unknown = undefined;
  private attempts = 0;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private connecting: Promise<void> | null = null;
  private readonly consumers = new Set<ConsumerState>();
  private waiters: Array<(err?: Error) => void> = [];

  private constructor(opts: BrokerOptions) {
    this.opts = {
      ...opts,
      publishTimeoutMs: opts.publishTimeoutMs ?? 5000,
      reconnectMinMs: opts.reconnectMinMs ?? 200,
      reconnectMaxMs: opts.reconnectMaxMs ?? 10_000,
    };
    this.log = opts.logger;
  }

  /**
   * Makes one connection attempt and returns; when the broker is down the
   * connection keeps being retried in the background (isConnected() tells).
   */
  static async connect(opts: BrokerOptions): Promise<Broker> {
    const broker = new Broker(opts);
    broker.connecting = broker.connectOnce();
    await broker.connecting;
    return broker;
  }

  isConnected(): boolean {
    return this.pub !== null;
  }

  /** Resolves once connected; rejects after timeoutMs. */
  waitForConnection(timeoutMs: number): Promise<void> {
    if (this.isConnected()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const done = (err?: Error) => {
        clearTimeout(timer);
        if (err) reject(err);
        else resolve();
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== done);
        reject(new Error(`broker not connected after ${timeoutMs} ms`, { cause: this.lastError }));
      }, timeoutMs);
      this.waiters.push(done);
    });
  }

  /** Publishes with a publisher confirm; rejects when not connected, nacked or not confirmed in time. */
  publish(event: DomainEvent): Promise<void> {
    return this.send(this.pub, event, this.opts.exchange, event.type);
  }

  /** Publishes `event` straight into `queue` (default exchange) with confirms. Any payload type: it is only serialized. */
  publishToQueue(event: DomainEvent<unknown>, queue: string): Promise<void> {
    return this.send(this.pub, event, '', queue);
  }

  /**
   * Declares `<queue>.delay.<ms>` (queue-level x-message-ttl = ms, dead-lettering
   * through the default exchange to `queue`) and publishes `event` into it with
   * confirms; after `delayMs` it arrives in `queue`, routing key `queue`, as a
   * consumer's retry does. `queue` must exist by then (consume declares it), or the
   * message is dropped. The delay is part of the queue name, so changing a tier
   * never clashes with a queue declared with another TTL. A per-message TTL is not
   * used: it only expires at the head of a queue, behind longer delays.
   */
  async publishDelayed(event: DomainEvent<unknown>, queue: string, delayMs: number): Promise<void> {
    if (!Number.isSafeInteger(delayMs) || delayMs < 0) throw new RangeError(`delayMs must be a non-negative integer: ${delayMs}`);
    const ch = this.pub;
    const delayQueue = `${queue}.delay.${delayMs}`;
    // Not connected: send() rejects as publish() does.
    if (ch) {
      let declared = this.delayQueues.get(delayQueue);
      if (!declared) {
        declared = ch.assertQueue(delayQueue, {
          durable: true,
          arguments: { 'x-message-ttl': delayMs, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': queue },
        });
        // A refused declaration closes the channel and so the connection: the next connection declares again.
        this.delayQueues.set(delayQueue, declared);
      }
      try {
        await declared;
      } catch (err) {
        throw new Error(`publish of ${event.type} ${event.id} to ${delayQueue} failed`, { cause: err });
      }
    }
    await this.send(ch, event, '', delayQueue);
  }

  /**
   * A queue name that belongs to this broker's exchange (`<exchange>.<name>`), so
   * deployments or test runs sharing a vhost with different exchanges never share
   * (and steal from) one queue.
   */
  queueName(name: string): string {
    return `${this.opts.exchange}.${name}`;
  }

  /**
   * Declares `<queue>` (bound to the exchange), `<queue>.retry` and `<queue>.dlq`
   * and starts consuming; re-established after every reconnect. When connected,
   * a setup error (e.g. a queue declared earlier with other arguments) rejects.
   */
  async consume(options: ConsumeOptions): Promise<ConsumerHandle> {
    if (this.closed) throw new Error('broker closed');
    const c: ConsumerState = {
      opts: { prefetch: 10, maxAttempts: 5, retryDelayMs: 1000, ...options },
      channel: null,
      tag: null,
      starting: false,
      cancelled: false,
      retryTimer: null,
      retries: 0,
      inflight: new Set(),
    };
    this.consumers.add(c);
    const conn = this.conn;
    if (conn) {
      c.starting = true;
      try {
        await this.startConsumer(c, conn);
      } catch (err) {
        // Refused by the broker (e.g. queue arguments differ): a bug, so fail now.
        if (SETUP_REFUSALS.has((err as { code?: number }).code ?? 0)) {
          this.consumers.delete(c);
          throw new Error(`consumer setup for queue ${c.opts.queue} failed`, { cause: err });
        }
        // Otherwise (connection lost meanwhile) it is set up in the background.
        this.log.warn({ err, queue: c.opts.queue }, 'consumer setup interrupted; retrying in the background');
        this.scheduleConsumerRetry(c);
      } finally {
        c.starting = false;
      }
    }
    return { queue: c.opts.queue, cancel: () => this.cancelConsumer(c) };
  }

  /** Cancels consumers, waits for handlers in flight, closes the connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    for (const w of this.waiters.splice(0)) w(new Error('broker closed'));
    await Promise.allSettled([...this.consumers].map((c) => this.cancelConsumer(c)));
    await this.connecting;
    const conn = this.conn;
    this.conn = null;
    this.pub = null;
    if (conn) await conn.close().catch(() => {});
  }

  // ---- connection ----

  private async connectOnce(): Promise<void> {
    if (this.closed) return;
    let conn: ChannelModel | undefined;
    try {
      conn = await amqpConnect(this.opts.url, {
        timeout: 10_000,
        clientProperties: this.opts.connectionName ? { connection_name: this.opts.connectionName } : {},
      });
      const c = conn;
      // 'error' is always followed by 'close'; only the close drives recovery.
      c.on('error', (err: Error) => this.log.debug({ err }, 'amqp connection error'));
      c.on('blocked', (reason: string) => this.log.warn({ reason }, 'amqp connection blocked by the broker'));
      c.on('close', (err?: Error) => this.onConnectionClosed(c, err));
      if (this.closed) {
        await c.close().catch(() => {});
        return;
      }
      const pub = await c.createConfirmChannel();
      pub.on('error', (err: Error) => this.log.error({ err }, 'amqp publish channel error'));
      // A publish channel lost on a live connection: reconnect everything rather
      // than juggle half-open state (this only happens on broker-side errors).
      pub.on('close', () => {
        if (this.pub === pub) this.pub = null;
        if (this.conn === c && !this.closed) c.close().catch(() => {});
      });
      await pub.assertExchange(this.opts.exchange, 'topic', { durable: true });
      if (this.closed) {
        await c.close().catch(() => {});
        return;
      }
      this.conn = c;
      this.pub = pub;
      this.delayQueues = new Map();
      this.attempts = 0;
      if (this.down) this.log.info({ exchange: this.opts.exchange }, 'amqp connection restored');
      this.down = false;
      for (const w of this.waiters.splice(0)) w();
      for (const consumer of this.consumers) void this.ensureConsumer(consumer);
    } catch (err) {
      this.lastError = err;
      if (conn) await conn.close().catch(() => {});
      if (!this.down) this.log.warn({ err }, 'amqp connection failed; retrying in the background');
      else this.log.debug({ err }, 'amqp connection attempt failed');
      this.down = true;
      this.scheduleReconnect();
    }
  }

  private onConnectionClosed(conn: ChannelModel, err?: Error): void {
    if (this.conn !== conn) return;
    this.conn = null;
    this.pub = null;
    for (const c of this.consumers) {
      c.channel = null;
      c.tag = null;
    }
    if (this.closed) return;
    this.lastError = err ?? new Error('amqp connection closed');
    if (!this.down) this.log.warn({ err }, 'amqp connection lost; reconnecting');
    this.down = true;
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer) return;
    const { reconnectMinMs: min, reconnectMaxMs: max } = this.opts;
    const base = Math.min(max, min * 2 ** Math.min(this.attempts, 30));
    const delay = Math.min(max, Math.round(base * (0.8 + Math.random() * 0.4)));
    this.attempts++;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.connecting = this.connectOnce();
    }, delay);
  }

  // ---- consumers ----

  private async ensureConsumer(c: ConsumerState): Promise<void> {
    if (c.retryTimer) clearTimeout(c.retryTimer);
    c.retryTimer = null;
    const conn = this.conn;
    if (!conn || c.channel || c.starting || c.cancelled || this.closed) return;
    c.starting = true;
    try {
      await this.startConsumer(c, conn);
      c.retries = 0;
    } catch (err) {
      this.log.error({ err, queue: c.opts.queue }, 'consumer setup failed; retrying');
      this.scheduleConsumerRetry(c);
    } finally {
      c.starting = false;
    }
  }

  private scheduleConsumerRetry(c: ConsumerState): void {
    if (this.closed || c.cancelled || c.retryTimer) return;
    const delay = Math.min(this.opts.reconnectMaxMs, this.opts.reconnectMinMs * 2 ** Math.min(c.retries++, 30));
    c.retryTimer = setTimeout(() => void this.ensureConsumer(c), delay);
  }

  private async startConsumer(c: ConsumerState, conn: ChannelModel): Promise<void> {
    const { queue, bindings, prefetch, retryDelayMs } = c.opts;
    // A confirm channel, so a retry/DLQ republish is confirmed before the original is acked.
    const ch = await conn.createConfirmChannel();
    ch.on('error', (err: Error) => this.log.error({ err, queue }, 'amqp consumer channel error'));
    ch.on('close', () => {
      if (c.channel !== ch) return;
      c.channel = null;
      c.tag = null;
      // On a live connection (queue deleted, channel error) set up again; otherwise the reconnect does.
      if (this.conn === conn) this.scheduleConsumerRetry(c);
    });
    try {
      await ch.prefetch(prefetch);
      await ch.assertExchange(this.opts.exchange, 'topic', { durable: true });
      await ch.assertQueue(queue, { durable: true });
      await ch.assertQueue(`${queue}.retry`, {
        durable: true,
        arguments: { 'x-message-ttl': retryDelayMs, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': queue },
      });
      await ch.assertQueue(`${queue}.dlq`, { durable: true });
      for (const pattern of bindings) await ch.bindQueue(queue, this.opts.exchange, pattern);
      c.channel = ch;
      const { consumerTag } = await ch.consume(queue, (msg) => {
        if (msg === null) {
          // Cancelled by the broker (queue deleted): drop the channel; its close handler re-declares.
          ch.close().catch(() => {});
          return;
        }
        const p = this.handleDelivery(c, ch, msg).catch((err) =>
          this.log.error({ err, queue }, 'message left unacked; it will be redelivered'),
        );
        c.inflight.add(p);
        void p.finally(() => c.inflight.delete(p));
      });
      c.tag = consumerTag;
    } catch (err) {
      c.channel = null;
      await ch.close().catch(() => {});
      throw err;
    }
  }

  private async cancelConsumer(c: ConsumerState): Promise<void> {
    c.cancelled = true;
    if (c.retryTimer) clearTimeout(c.retryTimer);
    c.retryTimer = null;
    const ch = c.channel;
    if (ch && c.tag) await ch.cancel(c.tag).catch(() => {});
    await Promise.allSettled([...c.inflight]);
    this.consumers.delete(c);
    c.channel = null;
    c.tag = null;
    if (ch) await ch.close().catch(() => {});
  }

  private async handleDelivery(c: ConsumerState, ch: ConfirmChannel, msg: ConsumeMessage): Promise<void> {
    const { queue, maxAttempts, handler, dedupe } = c.opts;
    const headers: Record<string, unknown> = { ...(msg.properties.headers ?? {}) };
    const attempt = Math.max(1, Number(headers[ATTEMPT_HEADER]) || 1);
    let event: DomainEvent;
    try {
      event = parseEvent(msg.content);
    } catch (err) {
      this.log.error({ err, queue, messageId: msg.properties.messageId }, 'unparseable message sent to the DLQ');
      await this.forward(ch, `${queue}.dlq`, msg, headers, attempt, (err as Error).message);
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
      this.log.warn(
        { err, queue, eventId: event.id, type: event.type, attempt },
        dead ? 'handler failed for the last time; message sent to the DLQ' : 'handler failed; retry scheduled',
      );
      const message = err instanceof Error ? err.message : String(err);
      await this.forward(ch, dead ? `${queue}.dlq` : `${queue}.retry`, msg, headers, dead ? attempt : attempt + 1, message);
    } finally {
      span.end();
    }
    ch.ack(msg);
  }

  /** Publishes an event on `ch` (the publish channel when the call began) and waits for the confirm, in a producer span. */
  private async send(ch: ConfirmChannel | null, event: DomainEvent<unknown>, exchange: string, routingKey: string): Promise<void> {
    const destination = exchange || routingKey;
    const span = trace.getTracer('lpm-broker').startSpan(`publish ${destination}`, {
      kind: SpanKind.PRODUCER,
      attributes: {
        'messaging.system': 'rabbitmq',
        'messaging.operation.type': 'send',
        'messaging.destination.name': destination,
        'messaging.rabbitmq.destination.routing_key': routingKey,
        'messaging.message.id': event.id,
      },
    });
    try {
      if (!ch) throw new Error('broker not connected', { cause: this.lastError });
      const headers = injectTraceHeaders({}, trace.setSpan(context.active(), span));
      await confirmPublish(
        ch,
        exchange,
        routingKey,
        Buffer.from(JSON.stringify(event)),
        {
          persistent: true,
          messageId: event.id,
          type: event.type,
          contentType: 'application/json',
          timestamp: Math.floor(Date.parse(event.created_at) / 1000) || undefined,
          headers,
        },
        this.opts.publishTimeoutMs,
      );
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw new Error(`publish of ${event.type} ${event.id}${exchange ? '' : ` to ${routingKey}`} failed`, { cause: err });
    } finally {
      span.end();
    }
  }

  /** Republishes msg to a queue (default exchange) and waits for the confirm. */
  private forward(
    ch: ConfirmChannel,
    target: string,
    msg: ConsumeMessage,
    headers: Record<string, unknown>,
    attempt: number,
    error: string,
  ): Promise<void> {
    const h: Record<string, unknown> = { ...headers, [ATTEMPT_HEADER]: attempt, [LAST_ERROR_HEADER]: error.slice(0, 1000) };
    for (const k of DEATH_HEADERS) delete h[k];
    const p = msg.properties;
    return confirmPublish(
      ch,
      '',
      target,
      msg.content,
      {
        persistent: true,
        headers: h,
        ...(p.contentType ? { contentType: p.contentType } : {}),
        ...(p.type ? { type: p.type } : {}),
        ...(p.messageId ? { messageId: p.messageId } : {}),
        ...(p.timestamp ? { timestamp: p.timestamp } : {}),
      },
      this.opts.publishTimeoutMs,
    );
  }
}

function confirmPublish(
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

function parseEvent(content: Buffer): DomainEvent {
  let value: unknown;
  try {
    value = JSON.parse(content.toString('utf8'));
  } catch (err) {
    throw new Error('message body is not valid JSON', { cause: err });
  }
  const v = value as Partial<DomainEvent> | null;
  if (!v || typeof v !== 'object' || typeof v.id !== 'string' || typeof v.type !== 'string') {
    throw new Error('message body is not a domain event (id and type required)');
  }
  return v as DomainEvent;
}

/**
 * Dedupe backed by a collection `dedupe_<consumerName>` whose `_id` is the event
 * id: inserting the id is the claim (an insert is the one write FerretDB makes
 * atomic), `state` turns to done once the handler succeeded.
 */
export function mongoDedupe(db: Db, consumerName: string): Dedupe {
  const col = db.collection<{ _id: string; state: 'processing' | 'done'; at: Date }>(`dedupe_${consumerName}`);
  return {
    async claim(eventId) {
      try {
        await col.insertOne({ _id: eventId, state: 'processing', at: new Date() });
        return 'new';
      } catch (err) {
        if ((err as { code?: number }).code !== 11000) throw new Error(`dedupe claim ${eventId} failed`, { cause: err });
      }
      const held = await col.findOne({ _id: eventId });
      if (!held) return this.claim(eventId);
      if (held.state === 'done') return 'done';
      if (Date.now() - held.at.getTime() < CLAIM_STALE_MS) return 'busy';
      await col.deleteOne({ _id: eventId, state: 'processing', at: held.at });
      return this.claim(eventId);
    },
    async complete(eventId) {
      await col.updateOne({ _id: eventId }, { $set: { state: 'done', at: new Date() } });
    },
    async release(eventId) {
      await col.deleteOne({ _id: eventId, state: 'processing' });
    },
  };
}
