// Publication events into the timelines of the cases they name: publication.received
// with a case, and publication.updated when its case changed to one.
import type { Broker, ConsumerHandle } from '@lpm/shared/messaging/broker';
import type { DomainEvent } from '@lpm/shared/events';
import { isObject } from '@lpm/shared/upstream/service-client';
import type { CasesRepository } from '../data/cases-repository.ts';
import { recordPublication, type PublicationNews } from '../domain/publication-entries.ts';

/** The news of an event for a case's timeline; null when it adds nothing (no case, or the case did not change). */
export function publicationNewsOf(event: DomainEvent): PublicationNews | null {
  const p = event.data.object;
  if (!isObject(p) || typeof p.id !== 'string')
    throw new Error(`${event.type} ${event.id} does not carry a publication`);
  if (typeof p.case_id !== 'string') return null;
  const previous = event.data.previous_attributes;
  if (event.type === 'publication.updated' && !(previous && 'case_id' in previous && previous.case_id !== p.case_id))
    return null;
  return {
    teamId: event.team_id,
    eventId: event.id,
    caseId: p.case_id,
    documentType: typeof p.document_type === 'string' ? p.document_type : null,
    court: typeof p.court === 'string' ? p.court : '',
    madeAvailable: typeof p.made_available_date === 'string' ? p.made_available_date : '',
    at: new Date(event.created_at),
  };
}

export function consumePublicationEvents(broker: Broker, cases: CasesRepository): Promise<ConsumerHandle> {
  return broker.consume({
    queue: broker.queueName('cases.publication-events'),
    bindings: ['publication.received', 'publication.updated'],
    handler: async (event) => {
      const news = publicationNewsOf(event);
      if (news) await recordPublication(cases, news);
    },
  });
}
