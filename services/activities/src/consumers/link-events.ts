// Keeps the local views of cases and clients (titles, numbers and names shown on
// activities) current from their events. Recording is idempotent (newer facts
// win), so redeliveries need no dedupe store.
import type { Broker, ConsumerHandle } from '@lpm/shared/messaging/broker';
import { CASE_VIEW_EVENTS, CLIENT_VIEW_EVENTS } from '@lpm/shared/views/view-events';
import type { Activities } from '../domain/activities.ts';
import { isClientFacts } from '@lpm/shared/upstream/clients-service';
import { isCaseFacts } from '@lpm/shared/upstream/cases-service';

export function consumeLinkEvents(broker: Broker, activities: Activities): Promise<ConsumerHandle> {
  return broker.consume({
    queue: broker.queueName('activities.link-views'),
    bindings: [...CASE_VIEW_EVENTS.bindings, ...CLIENT_VIEW_EVENTS.bindings],
    retiredBindings: [...CASE_VIEW_EVENTS.retiredBindings, ...CLIENT_VIEW_EVENTS.retiredBindings],
    handler: async (event) => {
      const object = event.data.object;
      if (event.type.startsWith('case.')) {
        if (!isCaseFacts(object)) throw new Error(`${event.type} ${event.id} does not carry a case`);
        await activities.recordCase(event.team_id, object);
      } else {
        if (!isClientFacts(object)) throw new Error(`${event.type} ${event.id} does not carry a client`);
        await activities.recordClient(event.team_id, object);
      }
    },
  });
}
