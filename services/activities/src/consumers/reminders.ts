// activity.reminder_due events (written once by the time signals) into e-mails.
// The dedupe store claims each event id first: a redelivery sends nothing.
import { mongoDedupe, type Broker, type ConsumerHandle } from '@lpm/shared/messaging/broker';
import type { Db } from 'mongodb';
import type { Reminders } from '../domain/reminders.ts';
import { REMINDER_EVENT } from '../jobs/due-signals.ts';

export function consumeReminders(broker: Broker, db: Db, reminders: Reminders): Promise<ConsumerHandle> {
  return broker.consume({
    queue: broker.queueName('activities.reminders'),
    bindings: [REMINDER_EVENT],
    dedupe: mongoDedupe(db, 'activities.reminders'),
    handler: async (event) => {
      await reminders.send(event.data.object);
    },
  });
}
