// Every domain event of every service, fanned out to the subscribed webhooks, whose
// first attempts are made while the event is held: up to `prefetch` events at once.
// An event is fresh on its first delivery by the broker: no copy can have stored its deliveries.
import { EVENT_TYPES } from '@lpm/shared/events';
import type { Broker, ConsumerHandle } from '@lpm/shared/messaging/broker';
import type { Deliveries } from '../domain/deliveries.ts';

export function consumeDomainEvents(broker: Broker, deliveries: Deliveries, prefetch: number): Promise<ConsumerHandle> {
  return broker.consume({
    queue: broker.queueName('webhooks.fan-out'),
    bindings: [...EVENT_TYPES],
    prefetch,
    handler: (e, meta) => deliveries.fanOut(e, meta.attempt === 1 && !meta.redelivered),
  });
}
