// Every domain event of every service, fanned out to the subscribed webhooks.
import { EVENT_TYPES } from '@lpm/shared/events';
import type { Broker, ConsumerHandle } from '@lpm/shared/messaging/broker';
import type { Deliveries } from '../domain/deliveries.ts';

export function consumeDomainEvents(broker: Broker, deliveries: Deliveries): Promise<ConsumerHandle> {
  return broker.consume({ queue: broker.queueName('webhooks.fan-out'), bindings: [...EVENT_TYPES], prefetch: 32, handler: (e) => deliveries.fanOut(e) });
}
