// Listens on the broker like any consumer would: a private queue bound to the
// test's exchange, keeping every domain event that arrives.
import { randomUUID } from 'node:crypto';
import amqp from 'amqplib';
import type { DomainEvent } from '@lpm/shared/events';
import { waitFor } from './wait.ts';

/** The routing key of the tap's own markers, bound beside the patterns asked for. */
const MARKER = 'test-kit.tap-marker';

export interface EventTap {
  events: DomainEvent[];
  of(type: string, objectId?: string): DomainEvent[];
  /** Waits until `count` events of `type` (about `objectId`, if given) have arrived. */
  waitFor(type: string, objectId?: string, count?: number, timeoutMs?: number): Promise<DomainEvent[]>;
  /**
   * Resolves once every event the broker took before this call has arrived: a
   * marker published now reaches the tap's queue after them, and the queue is read in order.
   */
  caughtUp(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function tapEvents(exchange: string, patterns: string[] = ['#']): Promise<EventTap> {
  const conn = await amqp.connect(process.env.AMQP_URL!);
  const ch = await conn.createConfirmChannel();
  await ch.assertExchange(exchange, 'topic', { durable: true });
  const { queue } = await ch.assertQueue('', { exclusive: true, autoDelete: true });
  for (const p of [...patterns, MARKER]) await ch.bindQueue(queue, exchange, p);
  const events: DomainEvent[] = [];
  const markers = new Set<string>();
  await ch.consume(
    queue,
    (msg) => {
      if (!msg) return;
      if (msg.fields.routingKey === MARKER) markers.add(msg.content.toString());
      else events.push(JSON.parse(msg.content.toString()));
    },
    { noAck: true },
  );
  const of = (type: string, objectId?: string) =>
    events.filter(
      (e) => e.type === type && (objectId === undefined || (e.data.object as { id?: string }).id === objectId),
    );
  return {
    events,
    of,
    async waitFor(type, objectId, count = 1, timeoutMs = 10_000) {
      await waitFor(`${count} ${type} event(s)`, () => of(type, objectId).length >= count, timeoutMs);
      return of(type, objectId);
    },
    async caughtUp(timeoutMs = 10_000) {
      const marker = randomUUID();
      ch.publish(exchange, MARKER, Buffer.from(marker));
      await ch.waitForConfirms();
      await waitFor('the tap to catch up with the broker', () => markers.has(marker), timeoutMs);
    },
    async close() {
      await ch.close().catch(() => {});
      await conn.close().catch(() => {});
    },
  };
}
