// Consumers that outlive connections. Each has its own confirm channel (so a
// retry/DLQ republish is confirmed before the original is acked), declares
// `<queue>` (bound to the exchange), `<queue>.retry` (its TTL is the retry delay;
// it dead-letters back into `<queue>`) and `<queue>.dlq`, and is set up again after
// every reconnect or lost channel. A transient failure (delivery.ts) is retried
// through `<queue>.delay.<ms>`, one queue per delay of its schedule (queue-level
// TTL dead-lettering back into `<queue>`, as Broker.publishDelayed). Generic over the message kind (domain events,
// work-queue jobs): the kind's parse turns a body into what the handler takes.
import type { Channel, ChannelModel, ConfirmChannel } from 'amqplib';
import type { DomainEvent } from '../events.ts';
import type { Logger } from '../logger.ts';
import type { Connection } from './connection.ts';
import type { Dedupe } from './dedupe.ts';
import {
  TRANSIENT_DELAYS_MS,
  delayQueueName,
  handleDelivery,
  isTransientFailure,
  type DeliveryHandling,
  type DeliveryMeta,
} from './delivery.ts';
import type { Message, ParseMessage } from './message.ts';
import type { QueueDepth, QueueOfConsumer } from './queue-types.ts';
import { declareQueues, delayQueueArguments, holdingQueueArguments, mainQueueArguments } from './queues.ts';

export interface ConsumeOptions<M extends Message = DomainEvent> {
  queue: string;
  /** Routing patterns bound to the exchange, e.g. `client.*` or `#`. */
  bindings: string[];
  /**
   * Patterns this consumer no longer binds: unbound at setup, as
   * a durable queue keeps its bindings across deploys.
   */
  retiredBindings?: string[];
  handler: (event: M, meta: DeliveryMeta) => Promise<void>;
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
  /**
   * Delays of the retries of a transient failure (the store unavailable, a 503, a
   * network error), in order, the last repeated. Default 1 s, 5 s, 30 s, 2 min, 10 min.
   * Transient failures do not count toward maxAttempts.
   */
  transientDelaysMs?: number[];
  /** How long a run of transient failures is retried before the DLQ. Default the broker's consumerRetryForMs. */
  retryForMs?: number;
  /** Which handler errors are transient. Default isTransientFailure. */
  isTransient?: (err: unknown) => boolean;
  dedupe?: Dedupe;
  /**
   * Which events take a dedupe claim (default every one): an event the handler does
   * nothing with can go without its claim's two store writes.
   */
  dedupeWhen?: (event: M) => boolean;
}

export interface ConsumerHandle {
  readonly queue: string;
  /** Stops deliveries and waits for the handlers in flight. */
  cancel(): Promise<void>;
}

export interface ConsumersOptions {
  exchange: string;
  logger: Logger;
  publishTimeoutMs: number;
  /** Backoff of a consumer's setup retries (first delay, doubled up to the cap), as for reconnects. */
  reconnectMinMs: number;
  reconnectMaxMs: number;
  /** Default ConsumeOptions.retryForMs (CONSUMER_RETRY_FOR). */
  retryForMs: number;
}

/** AMQP replies that will not change on retry: ACCESS_REFUSED, NOT_FOUND, RESOURCE_LOCKED, PRECONDITION_FAILED. */
const SETUP_REFUSALS = new Set([403, 404, 405, 406]);

/** A consumer as the registry sees it, whatever its message kind. */
interface Running {
  readonly queue: string;
  /** Sets the consumer up on the current connection unless it is up, starting or cancelled. */
  ensure(): Promise<void>;
  /** Forgets the channel of a connection that is gone. */
  detach(): void;
  cancel(): Promise<void>;
  /** Receiving deliveries (a consumer tag on a live channel). */
  readonly attached: boolean;
  /** The queue, and the queues its retries and dead letters wait in, by kind. */
  queues(): QueueOfConsumer[];
}

export type { QueueDepth, QueueOfConsumer };

/** The consumers of one Broker. */
export class Consumers {
  private readonly connection: Connection;
  private readonly opts: ConsumersOptions;
  private readonly running = new Set<Running>();

  constructor(connection: Connection, opts: ConsumersOptions) {
    this.connection = connection;
    this.opts = opts;
  }

  /** See Broker.consume; `parse` makes the handler's message from a body, or throws to dead-letter it. */
  async consume<M extends Message>(options: ConsumeOptions<M>, parse: ParseMessage<M>): Promise<ConsumerHandle> {
    if (this.connection.closed) throw new Error('broker closed');
    const delays = options.transientDelaysMs ?? TRANSIENT_DELAYS_MS;
    if (delays.length === 0 || delays.some((d) => !Number.isSafeInteger(d) || d < 0)) {
      throw new RangeError(`transientDelaysMs must be non-negative integers: ${JSON.stringify(delays)}`);
    }
    const settled = {
      prefetch: 10,
      maxAttempts: 5,
      retryDelayMs: 1000,
      retryForMs: this.opts.retryForMs,
      isTransient: isTransientFailure,
      ...withoutUndefined(options),
      transientDelaysMs: [...delays],
    };
    const c = new QueueConsumer(this.connection, this.opts, this.running, settled, parse);
    this.running.add(c);
    await c.begin();
    return { queue: c.queue, cancel: () => c.cancel() };
  }

  ensureAll(): void {
    for (const c of this.running) void c.ensure();
  }

  detachAll(): void {
    for (const c of this.running) c.detach();
  }

  /** The queues whose consumer is not receiving deliveries now (not yet set up, or lost with its channel or connection). */
  detached(): string[] {
    return [...this.running].filter((c) => !c.attached).map((c) => c.queue);
  }

  cancelAll(): Promise<unknown> {
    return Promise.allSettled([...this.running].map((c) => c.cancel()));
  }

  /** The depth of each consumer's queues, asked of the broker on a channel of their own; null while disconnected. */
  async depths(): Promise<QueueDepth[] | null> {
    const conn = this.connection.current;
    if (!conn) return null;
    const depths: QueueDepth[] = [];
    let ch: Channel | null = null;
    try {
      for (const q of [...this.running].flatMap((c) => c.queues())) {
        if (!ch) {
          ch = await conn.createChannel();
          ch.on('error', () => {});
        }
        try {
          const { messageCount, consumerCount } = await ch.checkQueue(q.name);
          depths.push({ ...q, messages: messageCount, consumers: consumerCount });
        } catch {
          // Not declared (yet): the broker closed the channel.
          ch = null;
        }
      }
    } finally {
      await ch?.close().catch(() => {});
    }
    return depths;
  }
}

type Settled<M extends Message> = ConsumeOptions<M> & {
  prefetch: number;
  maxAttempts: number;
  retryDelayMs: number;
  transientDelaysMs: number[];
  retryForMs: number;
  isTransient: (err: unknown) => boolean;
};

function withoutUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

class QueueConsumer<M extends Message> implements Running {
  readonly queue: string;
  private readonly connection: Connection;
  private readonly settings: ConsumersOptions;
  private readonly registry: Set<Running>;
  private readonly opts: Settled<M>;
  private readonly handling: DeliveryHandling<M>;
  private readonly log: Logger;
  private channel: ConfirmChannel | null = null;
  private tag: string | null = null;
  private starting = false;
  private cancelled = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private retries = 0;
  private readonly inflight = new Set<Promise<void>>();

  constructor(
    connection: Connection,
    settings: ConsumersOptions,
    registry: Set<Running>,
    opts: Settled<M>,
    parse: ParseMessage<M>,
  ) {
    this.connection = connection;
    this.settings = settings;
    this.registry = registry;
    this.opts = opts;
    this.queue = opts.queue;
    this.log = settings.logger;
    const { queue, maxAttempts, handler, dedupe, dedupeWhen, transientDelaysMs, retryForMs, isTransient } = opts;
    this.handling = {
      queue,
      maxAttempts,
      handler,
      dedupe,
      dedupeWhen,
      parse,
      log: this.log,
      publishTimeoutMs: settings.publishTimeoutMs,
      transientDelaysMs,
      retryForMs,
      isTransient,
    };
  }

  /**
   * The first setup, when connected. A setup error the broker will repeat (e.g. a
   * queue declared earlier with other arguments) rejects: a bug, so fail now.
   */
  async begin(): Promise<void> {
    const conn = this.connection.current;
    if (!conn) return;
    this.starting = true;
    try {
      await this.start(conn);
    } catch (err) {
      if (SETUP_REFUSALS.has((err as { code?: number }).code ?? 0)) {
        this.registry.delete(this);
        throw new Error(`consumer setup for queue ${this.queue} failed`, { cause: err });
      }
      // Otherwise (connection lost meanwhile) it is set up in the background.
      this.log.warn({ err, queue: this.queue }, 'consumer setup interrupted; retrying in the background');
      this.scheduleRetry();
    } finally {
      this.starting = false;
    }
  }

  async ensure(): Promise<void> {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const conn = this.connection.current;
    if (!conn || this.channel || this.starting || this.cancelled || this.connection.closed) return;
    this.starting = true;
    try {
      await this.start(conn);
      this.retries = 0;
    } catch (err) {
      this.log.error({ err, queue: this.queue }, 'consumer setup failed; retrying');
      this.scheduleRetry();
    } finally {
      this.starting = false;
    }
  }

  detach(): void {
    this.channel = null;
    this.tag = null;
  }

  queues(): QueueOfConsumer[] {
    const queue = this.queue;
    return [
      { queue, kind: 'main', name: queue },
      { queue, kind: 'retry', name: `${queue}.retry` },
      ...[...new Set(this.opts.transientDelaysMs)].map((d) => ({
        queue,
        kind: 'delay' as const,
        name: delayQueueName(queue, d),
      })),
      { queue, kind: 'dlq', name: `${queue}.dlq` },
    ];
  }

  get attached(): boolean {
    return this.tag !== null;
  }

  async cancel(): Promise<void> {
    this.cancelled = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const ch = this.channel;
    if (ch && this.tag) await ch.cancel(this.tag).catch(() => {});
    await Promise.allSettled([...this.inflight]);
    this.registry.delete(this);
    this.channel = null;
    this.tag = null;
    if (ch) await ch.close().catch(() => {});
  }

  private scheduleRetry(): void {
    if (this.connection.closed || this.cancelled || this.retryTimer) return;
    const { reconnectMinMs: min, reconnectMaxMs: max } = this.settings;
    const delay = Math.min(max, min * 2 ** Math.min(this.retries++, 30));
    this.retryTimer = setTimeout(() => void this.ensure(), delay);
  }

  private async start(conn: ChannelModel): Promise<void> {
    const { queue, bindings, retiredBindings, prefetch, retryDelayMs, transientDelaysMs } = this.opts;
    const { exchange } = this.settings;
    await declareQueues(conn, [
      { name: queue, arguments: mainQueueArguments(queue), bound: { exchange, patterns: bindings } },
      { name: `${queue}.retry`, arguments: delayQueueArguments(queue, retryDelayMs) },
      { name: `${queue}.dlq`, arguments: holdingQueueArguments() },
      ...[...new Set(transientDelaysMs)].map((d) => ({
        name: delayQueueName(queue, d),
        arguments: delayQueueArguments(queue, d),
      })),
    ]);
    const ch = await conn.createConfirmChannel();
    ch.on('error', (err: Error) => this.log.error({ err, queue }, 'amqp consumer channel error'));
    ch.on('close', () => {
      if (this.channel !== ch) return;
      this.channel = null;
      this.tag = null;
      // On a live connection (queue deleted, channel error) set up again; otherwise the reconnect does.
      if (this.connection.current === conn) this.scheduleRetry();
    });
    try {
      await ch.prefetch(prefetch);
      await ch.assertExchange(exchange, 'topic', { durable: true });
      for (const pattern of bindings) await ch.bindQueue(queue, exchange, pattern);
      for (const pattern of retiredBindings ?? []) await ch.unbindQueue(queue, exchange, pattern);
      this.channel = ch;
      const { consumerTag } = await ch.consume(queue, (msg) => {
        if (msg === null) {
          // Cancelled by the broker (queue deleted): drop the channel; its close handler re-declares.
          ch.close().catch(() => {});
          return;
        }
        // Its channel closed under it (a broker node lost) or its forward refused: nothing is
        // lost, the broker hands the message out again, so no error to page anyone for.
        const p = handleDelivery(this.handling, ch, msg).catch((err: unknown) =>
          this.log.warn({ err, queue }, 'message left unacked; it will be redelivered'),
        );
        this.inflight.add(p);
        void p.finally(() => this.inflight.delete(p));
      });
      this.tag = consumerTag;
    } catch (err) {
      this.channel = null;
      await ch.close().catch(() => {});
      throw err;
    }
  }
}
