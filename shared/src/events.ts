// The one envelope for every domain event. Services publish it on the broker; the
// webhooks service builds the API's delivery payload from it.
import { newId } from './ids.ts';
import { currentTraceHeaders } from './telemetry.ts';

/** Every event name of the API (the `webhooks` section of openapi/openapi.json). */
export const EVENT_TYPES = [
  'case.created',
  'case.updated',
  'case.archived',
  'case.phase_changed',
  'case.sla_warning',
  'case.sla_overdue',
  'activity.created',
  'activity.updated',
  'activity.completed',
  'activity.due_soon',
  'activity.overdue',
  'client.created',
  'client.updated',
  'client.deactivated',
  'deal.created',
  'deal.updated',
  'deal.phase_changed',
  'deal.won',
  'deal.lost',
  'financial.created',
  'financial.paid',
  'financial.overdue',
  'publication.received',
  'publication.updated',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export interface DomainEvent<T = Record<string, unknown>> {
  /** `evt_` + ULID; the same for every delivery of this event (idempotency key). */
  id: string;
  type: string;
  api_version: 'v1';
  /** ISO 8601 UTC with milliseconds. */
  created_at: string;
  team_id: string;
  /** The user whose request caused the change; null for time-driven events. */
  actor_id: string | null;
  data: {
    /** The resource after the change, in its detail read shape. */
    object: T;
    /** Prior values of the changed fields; null for creation and time-driven events. */
    previous_attributes: Record<string, unknown> | null;
  };
  /** W3C trace context of the request that caused the event, so its publish joins that trace. */
  trace?: Record<string, string>;
}

/**
 * A new event. `type` is normally one of EVENT_TYPES; other names are allowed
 * for internal events that are never offered to webhooks.
 */
export function newEvent<T>(
  type: EventType | (string & {}),
  teamId: string,
  object: T,
  previousAttributes: Record<string, unknown> | null = null,
  actorId: string | null = null,
): DomainEvent<T> {
  return {
    id: newId('evt'),
    type,
    api_version: 'v1',
    created_at: new Date().toISOString(),
    team_id: teamId,
    actor_id: actorId,
    data: { object, previous_attributes: previousAttributes },
    trace: currentTraceHeaders(),
  };
}
