// One small facade over amqplib: a connection kept up in the background (capped
// exponential backoff), a confirm channel for publishing domain events to a durable
// topic exchange (or straight into a queue, at once or through a delay queue; a
// message that no queue takes there is returned and the publish rejects), and
// consumers with bounded retries through a per-queue delay queue and a dead-letter
// queue (transient failures: growing delays through `<queue>.delay.<ms>`, never
// dead-lettered within consumerRetryForMs). Channels stay inside. The parts: connection.ts, publisher.ts, consumer.ts
// (with delivery.ts), dedupe.ts; work-queue.ts builds typed job queues on it.
import type { DomainEvent } from '../events.ts';
import type { Logger } from '../logger.ts';
import { Connection } from './connection.ts';
import { Consumers, type ConsumeOptions, type ConsumerHandle, type QueueDepth } from './consumer.ts';
import { parseEvent, type Message, type OutgoingMessage, type ParseMessage } from './message.ts';
import { Publisher } from './publisher.ts';

export type { ConsumeOptions, ConsumerHandle, QueueDepth } from './consumer.ts';
import { TRANSIENT_RETRY_FOR_MS } from './delivery.ts';
export {
  ATTEMPT_HEADER,
  FAILURES_HEADER,
  LAST_ERROR_HEADER,
  TRANSIENT_DELAYS_MS,
  TRANSIENT_HEADER,
  TRANSIENT_RETRY_FOR_MS,
  TRANSIENT_SINCE_HEADER,
  isTransientFailure,
  type DeliveryMeta,
} from './delivery.ts';
export { mongoDedupe, purgeDedupeRecords, type Dedupe } from './dedupe.ts';
export type { Message, OutgoingMessage, ParseMessage } from './message.ts';

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
  /** How long consumers retry a transient handler failure before the DLQ (CONSUMER_RETRY_FOR). Default 24 h. */
  consumerRetryForMs?: number;
}

export class Broker {
  private readonly exchange: string;
  private readonly connection: Connection;
  private readonly publisher: Publisher;
  private readonly consumers: Consumers;

  private constructor(opts: BrokerOptions) {
    const publishTimeoutMs = opts.publishTimeoutMs ?? 5000;
    const reconnectMinMs = opts.reconnectMinMs ?? 200;
    const reconnectMaxMs = opts.reconnectMaxMs ?? 10_000;
    const { exchange, logger } = opts;
    this.exchange = exchange;
    this.connection = new Connection(
      { url: opts.url, exchange, logger, connectionName: opts.connectionName, reconnectMinMs, reconnectMaxMs },
      { up: () => this.consumers.ensureAll(), down: () => this.consumers.detachAll() },
    );
    this.publisher = new Publisher(this.connection, { exchange, timeoutMs: publishTimeoutMs });
    const retryForMs = opts.consumerRetryForMs ?? TRANSIENT_RETRY_FOR_MS;
    this.consumers = new Consumers(this.connection, {
      exchange,
      logger,
      publishTimeoutMs,
      reconnectMinMs,
      reconnectMaxMs,
      retryForMs,
    });
  }

  /**
   * Makes one connection attempt and returns; when the broker is down the
   * connection keeps being retried in the background (isConnected() tells).
   */
  static async connect(opts: BrokerOptions): Promise<Broker> {
    const broker = new Broker(opts);
    await broker.connection.start();
    return broker;
  }

  /** As connect, without waiting for the first attempt: a server process listens while the broker is reached. */
  static open(opts: BrokerOptions): Broker {
    const broker = new Broker(opts);
    void broker.connection.start();
    return broker;
  }

  isConnected(): boolean {
    return this.connection.publishChannel !== null;
  }

  /** The queues of consumers not receiving deliveries now: none once every consumer is set up on a live connection. */
  detachedConsumers(): string[] {
    return this.consumers.detached();
  }

  /** Resolves once connected; rejects after timeoutMs. */
  waitForConnection(timeoutMs: number): Promise<void> {
    return this.connection.waitFor(timeoutMs);
  }

  /**
   * Publishes with a publisher confirm; rejects when not connected, nacked or not
   * confirmed in time. An event no queue is bound for yet is parked in
   * `<exchange>.unrouted` (publisher.ts), never dropped.
   */
  publish(event: DomainEvent): Promise<void> {
    return this.publisher.publish(event);
  }

  /**
   * Publishes `message` straight into `queue` (default exchange) with confirms.
   * Any message with an id, a type and created_at (a domain event of any payload,
   * a job): it is only serialized. The publish is mandatory: when `queue` does not
   * exist the broker returns the message and this rejects (declareQueue first).
   */
  publishToQueue(message: OutgoingMessage, queue: string): Promise<void> {
    return this.publisher.toQueue(message, queue);
  }

  /**
   * Declares `queue` (durable, no arguments: as consume() declares it) on the
   * publishing side, once per connection, so what is put into it waits there even
   * before its consumer is set up. Not connected: resolves (the publish rejects).
   */
  declareQueue(queue: string): Promise<void> {
    return this.publisher.declare(queue);
  }

  /**
   * Declares `<queue>.delay.<ms>` (queue-level x-message-ttl = ms, dead-lettering
   * through the default exchange to `queue`) and publishes `message` into it with
   * confirms; after `delayMs` it arrives in `queue`, routing key `queue`, as a
   * consumer's retry does. `queue` must exist by then (consume and declareQueue
   * declare it), or the broker drops the message when it expires. The delay is part of the queue name, so changing a tier
   * never clashes with a queue declared with another TTL. A per-message TTL is not
   * used: it only expires at the head of a queue, behind longer delays.
   */
  publishDelayed(message: OutgoingMessage, queue: string, delayMs: number): Promise<void> {
    return this.publisher.delayed(message, queue, delayMs);
  }

  /**
   * A queue name that belongs to this broker's exchange (`<exchange>.<name>`), so
   * deployments or test runs sharing a vhost with different exchanges never share
   * (and steal from) one queue.
   */
  queueName(name: string): string {
    return `${this.exchange}.${name}`;
  }

  /**
   * Declares `<queue>` (bound to the exchange), `<queue>.retry` and `<queue>.dlq`
   * and starts consuming domain events; re-established after every reconnect. When
   * connected, a setup error (e.g. a queue declared earlier with other arguments) rejects.
   */
  consume(options: ConsumeOptions): Promise<ConsumerHandle> {
    return this.consumers.consume(options, parseEvent);
  }

  /**
   * consume() for messages of another kind than domain events (WorkQueue's jobs):
   * `parse` makes the handler's message from a JSON body, or throws, and the
   * message goes to `<queue>.dlq`.
   */
  consumeMessages<M extends Message>(options: ConsumeOptions<M>, parse: ParseMessage<M>): Promise<ConsumerHandle> {
    return this.consumers.consume(options, parse);
  }

  /** The messages and consumers of this broker's consumers' queues (with their retry, delay and dead-letter queues); null while disconnected. */
  queueDepths(): Promise<QueueDepth[] | null> {
    return this.consumers.depths();
  }

  /** Cancels consumers, waits for handlers in flight, closes the connection. */
  close(): Promise<void> {
    return this.connection.close(() => this.consumers.cancelAll());
  }
}
