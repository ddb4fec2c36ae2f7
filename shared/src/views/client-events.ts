// Keeps a service's local view of clients current from client events.
import type { Broker, ConsumerHandle } from '../messaging/broker.ts';
import type { ServiceName } from '../service/names.ts';
import { isClientFacts } from '../upstream/clients-service.ts';
import type { ClientLinks } from './client-links.ts';
import { CLIENT_VIEW_EVENTS } from './view-events.ts';

export function consumeClientEvents(broker: Broker, links: ClientLinks, service: ServiceName): Promise<ConsumerHandle> {
  return broker.consume({
    queue: broker.queueName(`${service}.client-views`),
    ...CLIENT_VIEW_EVENTS,
    // Recording is idempotent (newer facts win), so redeliveries need no dedupe store.
    handler: async (event) => {
      const client = event.data.object;
      if (!isClientFacts(client)) throw new Error(`${event.type} ${event.id} does not carry a client`);
      await links.record(event.team_id, client);
    },
  });
}
