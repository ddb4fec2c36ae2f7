// Keeps the local view of clients (names shown on cases) current from client events.
import type { Broker, ConsumerHandle } from '@lpm/shared/messaging/broker';
import { viewOf, type ClientFacts, type ClientLinks } from '../domain/client-links.ts';

export function consumeClientEvents(broker: Broker, links: ClientLinks): Promise<ConsumerHandle> {
  return broker.consume({
    queue: broker.queueName('cases.client-views'),
    bindings: ['client.created', 'client.updated', 'client.deactivated'],
    // Recording is idempotent (newer facts win), so redeliveries need no dedupe store.
    handler: (event) => links.record(viewOf(event.team_id, event.data.object as unknown as ClientFacts)),
  });
}
