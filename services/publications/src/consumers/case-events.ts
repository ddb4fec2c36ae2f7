// Case events into the local view of case numbers: a case created or renumbered
// picks up the team's unmatched publications of its number. Recording is idempotent
// (newer news wins, a linked publication is not linked again), so redeliveries need no dedupe store.
// An update that names its previous attributes without the number (a new title, a phase)
// brings no news of it: the view keeps what the number's last change set, with that
// change's own instant, so skipping it cannot let older news win later.
import type { Broker, ConsumerHandle } from '@lpm/shared/messaging/broker';
import { isObject } from '@lpm/shared/upstream/service-client';
import { changesShown } from '@lpm/shared/views/view-events';
import type { Publications } from '../domain/publications.ts';

export function consumeCaseEvents(broker: Broker, publications: Publications): Promise<ConsumerHandle> {
  return broker.consume({
    queue: broker.queueName('publications.case-numbers'),
    bindings: ['case.created', 'case.updated'],
    handler: async (event) => {
      if (!changesShown(event.data.previous_attributes, ['number'])) return;
      const c = event.data.object;
      if (!isObject(c) || typeof c.id !== 'string' || typeof c.updated_at !== 'string')
        throw new Error(`${event.type} ${event.id} does not carry a case`);
      const number = typeof c.number === 'string' ? c.number : null;
      await publications.recordCase({ teamId: event.team_id, caseId: c.id, number, asOf: new Date(c.updated_at) });
    },
  });
}
