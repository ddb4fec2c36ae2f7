// Keeps a service's local views of clients and cases current from their owners'
// events: one queue for the views given. Recording is idempotent (newer facts win),
// so redeliveries need no dedupe store.
import type { Broker, ConsumerHandle } from '../messaging/broker.ts';
import { isCaseFacts } from '../upstream/cases-service.ts';
import { isClientFacts } from '../upstream/clients-service.ts';
import type { CaseLinks } from './case-links.ts';
import type { ClientLinks } from './client-links.ts';
import { CASE_VIEW_EVENTS, CLIENT_VIEW_EVENTS, changesShown } from './view-events.ts';

interface KeptViews {
  clients?: ClientLinks;
  cases?: CaseLinks;
}

/** `queue`: the queue's name before the broker's prefix (`<service>.client-views`, `<service>.link-views`). */
export function consumeViewEvents(broker: Broker, queue: string, views: KeptViews): Promise<ConsumerHandle> {
  const kept = [views.clients ? CLIENT_VIEW_EVENTS : null, views.cases ? CASE_VIEW_EVENTS : null].filter(
    (e) => e !== null,
  );
  return broker.consume({
    queue: broker.queueName(queue),
    bindings: kept.flatMap((e) => e.bindings),
    retiredBindings: kept.flatMap((e) => e.retiredBindings),
    handler: async (event) => {
      const object = event.data.object;
      const previous = event.data.previous_attributes as Record<string, unknown> | null | undefined;
      if (event.type.startsWith('case.') && views.cases) {
        if (!changesShown(previous, CASE_VIEW_EVENTS.shown)) return;
        if (!isCaseFacts(object)) throw new Error(`${event.type} ${event.id} does not carry a case`);
        await views.cases.record(event.team_id, object);
      } else if (event.type.startsWith('client.') && views.clients) {
        if (!changesShown(previous, CLIENT_VIEW_EVENTS.shown)) return;
        if (!isClientFacts(object)) throw new Error(`${event.type} ${event.id} does not carry a client`);
        await views.clients.record(event.team_id, object);
      }
    },
  });
}
