// Keeps the local view of clients (names shown on deals) current from client events.
import type { Broker, ConsumerHandle } from '@lpm/shared/messaging/broker';
import type { ClientLinks } from '../domain/client-links.ts';
import { isClientFacts } from '../upstream/clients-service.ts';

export function consumeClientEvents(broker: Broker, links: ClientLinks): Promise<ConsumerHandle> {
  return broker.consume({
    queue: broker.queueName('deals.client-views'),
    bindings: ['client.created', 'client.updated', 'client.deactivated'],
    // Recording is idempotent (newer facts win), so redeliveries need no dedupe store.
    handler: async (event) => {
      const client = event.data.object;
      if (!isClientFacts(client)) throw new Error(`${event.type} ${event.id} does not carry a client`);
      await links.record(event.team_id, client);
    },
  });
}
