// What the outbox relay tests read: the events that really reached RabbitMQ.
import { connect as amqpConnect, type Channel, type ChannelModel, type ConsumeMessage } from 'amqplib';
import { newEvent, type DomainEvent } from '../src/events.ts';

/** Reads straight from RabbitMQ (no proxy, no Broker): what really went out on `exchange`. */
export class Observer {
  received: { event: DomainEvent; msg: ConsumeMessage }[] = [];
  private conn!: ChannelModel;
  private ch!: Channel;
  static async start(exchange: string, queue: string): Promise<Observer> {
    const o = new Observer();
    o.conn = await amqpConnect(process.env.AMQP_URL!);
    o.ch = await o.conn.createChannel();
    await o.ch.assertExchange(exchange, 'topic', { durable: true });
    await o.ch.assertQueue(queue, { durable: false, exclusive: true });
    await o.ch.bindQueue(queue, exchange, '#');
    await o.ch.consume(queue, (msg) => {
      if (msg) o.received.push({ event: JSON.parse(msg.content.toString()), msg });
    }, { noAck: true });
    return o;
  }
  ids(): string[] {
    return this.received.map((r) => r.event.id);
  }
  async close(): Promise<void> {
    await this.conn.close();
  }
}

/** `n` client.updated events labelled `label`. */
export function events(n: number, label: string): DomainEvent[] {
  return Array.from({ length: n }, (_, i) => newEvent('client.updated', 'team_1', { label, i }, { i: i - 1 }, 'user_1'));
}
