// Case events into the clients they name: a case created for a client, or moved
// from one client to another, has its clients' cases counted again
// (Clients.recountCases). Recounting is idempotent, so redeliveries need no dedupe store.
import type { Broker, ConsumerHandle } from '@lpm/shared/messaging/broker';
import { isObject } from '@lpm/shared/upstream/service-client';
import type { DomainEvent } from '@lpm/shared/events';
import type { Clients } from '../domain/clients.ts';

/** The clients whose count the event changes: the case's client, and on a move the one before. */
export function clientsNamed(event: DomainEvent): string[] {
  const kase = event.data.object;
  if (!isObject(kase) || !('client' in kase)) throw new Error(`${event.type} ${event.id} does not carry a case`);
  const now = isObject(kase.client) && typeof kase.client.id === 'string' ? kase.client.id : null;
  if (event.type === 'case.created') return now ? [now] : [];
  const previous = event.data.previous_attributes;
  if (!previous || !('client_id' in previous)) return [];
  const before = typeof previous.client_id === 'string' ? previous.client_id : null;
  return [now, before].filter((id): id is string => id !== null);
}

/** Keeps each client's cases_count in step with the case events that name it. */
export function consumeCaseCounts(broker: Broker, clients: Clients): Promise<ConsumerHandle> {
  return broker.consume({
    queue: broker.queueName('clients.case-counts'),
    bindings: ['case.created', 'case.updated'],
    handler: async (event) => {
      const clientIds = clientsNamed(event);
      if (clientIds.length > 0 && !event.actor_id)
        throw new Error(`${event.type} ${event.id} has no actor to ask the cases service for`);
      for (const clientId of clientIds) await clients.recountCases(event.team_id, event.actor_id!, clientId);
    },
  });
}
