// Activity events into the cases they name: activities_count and the timeline's
// activity_added / activity_completed (docs/decisions.md §5). A count is not idempotent by
// nature, so each event is claimed once in a dedupe store.
import type { Db } from 'mongodb';
import { mongoDedupe, type Broker, type ConsumerHandle } from '@lpm/shared/messaging/broker';
import { isObject } from '@lpm/shared/upstream/service-client';
import type { DomainEvent } from '@lpm/shared/events';
import { caseChangesOf, type ActivityEventNews } from '../domain/case-activity-counts.ts';
import type { Cases } from '../domain/cases.ts';

const TYPES = ['activity.created', 'activity.updated', 'activity.completed', 'activity.deleted'] as const;

/** The activity in an event's object (its detail shape: `case` nested, with an id). */
function activityOf(object: unknown): ActivityEventNews['activity'] | null {
  if (!isObject(object) || typeof object.id !== 'string' || typeof object.title !== 'string') return null;
  const c = object.case;
  if (c !== null && c !== undefined && !(isObject(c) && typeof c.id === 'string')) return null;
  return { id: object.id, title: object.title, case_id: c ? (c.id as string) : null };
}

/** What an event says of its activity's cases; throws when it carries no activity. */
function newsOf(event: DomainEvent): ActivityEventNews {
  const activity = activityOf(event.data.object);
  if (!activity || !(TYPES as readonly string[]).includes(event.type))
    throw new Error(`${event.type} ${event.id} does not carry an activity`);
  const previous = event.data.previous_attributes;
  const previousCaseId = previous && 'case_id' in previous ? ((previous.case_id as string | null) ?? null) : undefined;
  return {
    teamId: event.team_id,
    type: event.type as ActivityEventNews['type'],
    activity,
    previousCaseId,
    actorId: event.actor_id,
    at: new Date(event.created_at),
    eventId: event.id,
  };
}

/** Whether the event changes a case; one that cannot be read is claimed, and fails in the handler. */
function changesACase(event: DomainEvent): boolean {
  try {
    const { adds, removes, completed } = caseChangesOf(newsOf(event));
    return adds.length > 0 || removes.length > 0 || completed !== null;
  } catch {
    return true;
  }
}

export function consumeActivityEvents(broker: Broker, db: Db, cases: Cases): Promise<ConsumerHandle> {
  return broker.consume({
    queue: broker.queueName('cases.activity-events'),
    bindings: [...TYPES],
    dedupe: mongoDedupe(db, 'cases.activity-events'),
    // Most activity events name no case change (a due date moved): they need no claim.
    dedupeWhen: changesACase,
    handler: (event) => cases.recordActivityEvent(newsOf(event)),
  });
}
