// Keeps the local views of clients and cases (names, titles and numbers shown on
// records) current from their owners' events. Recording is idempotent (newer
// facts win), so redeliveries need no dedupe store.
import type { Broker, ConsumerHandle } from '@lpm/shared/messaging/broker';
import { CASE_VIEW_EVENTS, CLIENT_VIEW_EVENTS } from '@lpm/shared/views/view-events';
import type { Financial } from '../domain/financial.ts';
import { isClientFacts } from '@lpm/shared/upstream/clients-service';
import { isCaseFacts } from '@lpm/shared/upstream/cases-service';

export function consumeClientEvents(broker: Broker, financial: Financial): Promise<ConsumerHandle> {
  return broker.consume({
    queue: broker.queueName('financial.client-views'),
    ...CLIENT_VIEW_EVENTS,
    handler: async (event) => {
      const client = event.data.object;
      if (!isClientFacts(client)) throw new Error(`${event.type} ${event.id} does not carry a client`);
      await financial.recordClient(event.team_id, client);
    },
  });
}

export function consumeCaseEvents(broker: Broker, financial: Financial): Promise<ConsumerHandle> {
  return broker.consume({
    queue: broker.queueName('financial.case-views'),
    ...CASE_VIEW_EVENTS,
    handler: async (event) => {
      const kase = event.data.object;
      if (!isCaseFacts(kase)) throw new Error(`${event.type} ${event.id} does not carry a case`);
      await financial.recordCase(event.team_id, kase);
    },
  });
}
