// A Broker on its own exchange for one test file, with a raw channel to look into
// queues, and every queue the file declared deleted at the end (consumers first:
// a consumer whose queue is deleted declares it again).
import { connect as amqpConnect, type Channel, type ChannelModel } from 'amqplib';
import { Broker } from '@lpm/shared/messaging/broker';
import { quietLogger } from './wait.ts';

export interface ScratchBroker {
  broker: Broker;
  /** A plain channel on the same vhost. */
  ch: Channel;
  /** Queues to delete at the end (add every queue a test declares, directly or through the broker). */
  declared: Set<string>;
  close(): Promise<void>;
}

export async function scratchBroker(exchange: string, connectionName?: string): Promise<ScratchBroker> {
  const url = process.env.AMQP_URL!;
  const broker = await Broker.connect({
    url,
    exchange,
    logger: quietLogger,
    ...(connectionName ? { connectionName } : {}),
  });
  const raw: ChannelModel = await amqpConnect(url);
  const ch = await raw.createChannel();
  const declared = new Set<string>();
  return {
    broker,
    ch,
    declared,
    close: async () => {
      await broker.close();
      for (const q of declared) await ch.deleteQueue(q);
      await ch.deleteExchange(exchange);
      await raw.close();
    },
  };
}
