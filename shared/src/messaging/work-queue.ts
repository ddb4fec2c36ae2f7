// A typed queue of jobs that are not domain events (e.g. one webhook delivery
// attempt): pushed straight into one durable queue (declared by the pushing side
// too, so it exists before its consumer does), never through the exchange,
// so no event consumer sees them, and consumed with the same retry and DLQ as
// events. A job travels as its own small envelope rather than dressed up as a
// domain event, so neither side casts the payload out of `data.object`.
import type { DeliveryMeta } from './delivery.ts';
import type { Broker, ConsumeOptions, ConsumerHandle } from './broker.ts';
import { isMessage } from './message.ts';
import { newId } from '../ids.ts';

/** The body of a job message. `job` is whatever this queue's pushes put in; it is not validated. */
export interface JobMessage<J> {
  /** `job_` + ULID: the AMQP messageId, the same on every retry of this push. */
  id: string;
  /** The queue's job type; a message of another type in the queue is dead-lettered. */
  type: string;
  /** ISO 8601 UTC with milliseconds. */
  created_at: string;
  job: J;
}

export interface WorkQueueOptions {
  /** A full queue name: callers pass `broker.queueName('webhooks.attempts')`. */
  queue: string;
  /** The jobs' type, e.g. `webhooks.attempt` (the AMQP `type` property, and checked on receipt). */
  type: string;
}

export interface WorkerOptions {
  /** Jobs handled at once. Default 10. */
  prefetch?: number;
  /** Deliveries before a failing job goes to `<queue>.dlq`. Default 5. */
  maxAttempts?: number;
  /** Delay before a retry (fixed once `<queue>.retry` is declared). Default 1000. */
  retryDelayMs?: number;
}

export class WorkQueue<J> {
  readonly queue: string;
  readonly type: string;
  private readonly broker: Pick<Broker, 'declareQueue' | 'publishToQueue' | 'publishDelayed' | 'consumeMessages'>;

  constructor(
    broker: Pick<Broker, 'declareQueue' | 'publishToQueue' | 'publishDelayed' | 'consumeMessages'>,
    opts: WorkQueueOptions,
  ) {
    this.broker = broker;
    this.queue = opts.queue;
    this.type = opts.type;
  }

  /**
   * Queues `job` with a publisher confirm: straight into the queue, or after
   * `delayMs` through `<queue>.delay.<delayMs>` (see Broker.publishDelayed). The
   * queue is declared first (once per connection), so a job pushed before any
   * consumer of it is set up waits in it; a publish nothing takes rejects. A
   * negative or fractional delay rejects with a RangeError.
   */
  async push(job: J, delayMs = 0): Promise<void> {
    if (!Number.isSafeInteger(delayMs) || delayMs < 0)
      throw new RangeError(`delayMs must be a non-negative integer: ${delayMs}`);
    const message: JobMessage<J> = { id: newId('job'), type: this.type, created_at: new Date().toISOString(), job };
    await this.broker.declareQueue(this.queue);
    return delayMs === 0
      ? this.broker.publishToQueue(message, this.queue)
      : this.broker.publishDelayed(message, this.queue, delayMs);
  }

  /**
   * Declares the queue with its `.retry` and `.dlq` and hands each job to
   * `handler`; a rejected handler is retried (meta.attempt counts) up to
   * maxAttempts, then the message goes to `<queue>.dlq`.
   */
  consume(handler: (job: J, meta: DeliveryMeta) => Promise<void>, opts: WorkerOptions = {}): Promise<ConsumerHandle> {
    // Only the options given: an explicit undefined would override a default.
    const settings: Partial<ConsumeOptions<JobMessage<J>>> = {};
    if (opts.prefetch !== undefined) settings.prefetch = opts.prefetch;
    if (opts.maxAttempts !== undefined) settings.maxAttempts = opts.maxAttempts;
    if (opts.retryDelayMs !== undefined) settings.retryDelayMs = opts.retryDelayMs;
    return this.broker.consumeMessages<JobMessage<J>>(
      { ...settings, queue: this.queue, bindings: [], handler: (message, meta) => handler(message.job, meta) },
      (body) => this.parse(body),
    );
  }

  private parse(body: unknown): JobMessage<J> {
    if (!isMessage(body) || body.type !== this.type || !('job' in body)) {
      throw new Error(`message body is not a ${this.type} job (id, type ${this.type} and job required)`);
    }
    return body as JobMessage<J>;
  }
}
