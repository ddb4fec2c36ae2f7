// The event catalog: when each event is emitted (interface-spec "Events",
// decisions §5), an example delivery, and the JSON Schema of a delivery's body.
// It is the one source of both the OpenAPI document's `webhooks` section (the
// gateway) and GET /v1/webhooks/event-types (the webhooks service). The resource a
// delivery carries in data.object is each service's detail read shape, which only
// the API document assembles: the catalog names it by its component and its schema
// points there (`/v1/openapi.json#/components/schemas/<name>`, a reference the API's
// own address resolves), so no copy of a service's shape lives here to drift.
import { EVENT_TYPES, type EventType } from './events.ts';
import { RESOURCE_EXAMPLES } from './webhook-examples.ts';

type Json = Record<string, unknown>;

export const EVENT_DESCRIPTIONS: Record<EventType, string> = {
  'case.created': 'A case is created (in the app or by API).',
  'case.updated': 'Case data, phase or priority changes, or an archived case is restored.',
  'case.archived': 'Case status becomes arquivado.',
  'case.phase_changed': 'The case moves in the kanban.',
  'case.sla_warning': '24 hours before the end of the SLA date (23:59:59, team time zone), once, ativo cases only.',
  'case.sla_overdue': 'The SLA date has passed, once, ativo cases only.',
  'activity.created': 'An activity is created.',
  'activity.updated': 'Activity data changes.',
  'activity.completed': 'Status becomes completed.',
  'activity.due_soon': 'Once, when the due moment is 24 hours or less away.',
  'activity.overdue': 'Once, when the due moment has passed.',
  'client.created': 'A client is created.',
  'client.updated': 'Client data changes, or an inactive client is reactivated.',
  'client.deactivated': 'Client status becomes inactive.',
  'deal.created': 'A deal is created.',
  'deal.updated': 'Deal data or phase changes.',
  'deal.phase_changed': 'The deal moves in the pipeline.',
  'deal.won': 'The deal is marked won.',
  'deal.lost': 'The deal is marked lost.',
  'financial.created': 'A financial record is created.',
  'financial.paid': 'Status becomes paid.',
  'financial.overdue': "Once, when a pending record's due date has passed.",
  'publication.received':
    "A publication of the DJEN for one of the team's watched lawyers is kept for the first time (with `case_id` when it matched a case).",
  'publication.updated':
    'A publication changes: its status, its case (matched later or linked by hand), its deadline or deadline activity, or its content (cancelled by the court).',
};

export type EventFamily = keyof typeof RESOURCE_EXAMPLES;

/**
 * The component schema of each event family's data.object (its detail read
 * shape), less the fields a read computes and an event does not carry.
 */
export const EVENT_RESOURCES: Record<EventFamily, { schema: string; omit?: string[] }> = {
  case: { schema: 'Case' },
  activity: { schema: 'Activity' },
  client: { schema: 'Client' },
  deal: { schema: 'Deal', omit: ['activities_count', 'ai_insights'] },
  financial: { schema: 'FinancialRecord' },
  publication: { schema: 'Publication' },
};

export const familyOf = (event: EventType) => event.slice(0, event.indexOf('.')) as EventFamily;

/** The component data.object refers to: the resource's, or its copy without the omitted fields. */
export const objectComponent = (family: EventFamily) =>
  `${EVENT_RESOURCES[family].schema}${EVENT_RESOURCES[family].omit ? 'EventObject' : ''}`;

/** The component of a family's delivery body. */
export const payloadComponent = (family: EventFamily) => `${EVENT_RESOURCES[family].schema}Event`;

/** Where the API document keeps its named schemas, as the catalog's schemas refer to them. */
export const DOCUMENT_COMPONENTS = '/v1/openapi.json#/components/schemas/';

/** The schema of a family's delivery body; `componentsRef` prefixes the name of the resource's component. */
export function eventPayloadSchema(family: EventFamily, componentsRef: string): Json {
  return {
    title: payloadComponent(family),
    description: `The body of a ${family}.* delivery.`,
    type: 'object',
    required: ['id', 'type', 'api_version', 'created_at', 'data', 'team_id', 'webhook_id'],
    properties: {
      id: {
        type: 'string',
        description:
          'The event id (evt_ prefix), the same for every retry of this event to this webhook: use it to drop duplicates.',
        examples: ['evt_01jd3kc4d6f8h0k2n4q6s8u0w2'],
      },
      type: { type: 'string', enum: EVENT_TYPES.filter((e) => e.startsWith(`${family}.`)) },
      api_version: { type: 'string', const: 'v1' },
      created_at: { type: 'string', format: 'date-time' },
      data: {
        type: 'object',
        required: ['object', 'previous_attributes'],
        properties: {
          object: {
            $ref: `${componentsRef}${objectComponent(family)}`,
            description: 'The resource after the change, in its detail read shape.',
          },
          previous_attributes: {
            type: ['object', 'null'],
            additionalProperties: true,
            description: 'The prior values of the changed fields; null for creation and time-driven events.',
          },
        },
      },
      team_id: { type: 'string' },
      webhook_id: { type: 'string' },
    },
  };
}

/** What an event changes in its family's example resource, and the prior values it reports. */
const CHANGES: Partial<Record<EventType, { object?: Json; previous: Json }>> = {
  'case.updated': { previous: { priority: 'media' } },
  'case.archived': {
    object: { status: 'arquivado', archived_at: '2026-11-27T09:41:03.117Z' },
    previous: { status: 'ativo' },
  },
  'case.phase_changed': { previous: { phase: 'inicial' } },
  'activity.updated': { previous: { title: 'Draft the reply' } },
  'activity.completed': {
    object: {
      status: 'completed',
      completed_at: '2026-11-27T09:41:03.117Z',
      completed_by: { id: 'user_01jd3k1b3d5f7h9k1m3p5r7t9v', name: 'Ana Costa' },
    },
    previous: { status: 'pending' },
  },
  'client.updated': { previous: { phone: null } },
  'client.deactivated': {
    object: { status: 'inactive', deactivated_at: '2026-11-27T09:41:03.117Z' },
    previous: { status: 'active' },
  },
  'deal.updated': { previous: { value: 40000 } },
  'deal.phase_changed': { previous: { phase: 'qualificacao' } },
  'deal.won': {
    object: { status: 'ganho', final_value: 48000, won_at: '2026-11-27T09:41:03.117Z' },
    previous: { status: 'ativo' },
  },
  'deal.lost': {
    object: { status: 'perdido', loss_reason: 'price', lost_at: '2026-11-27T09:41:03.117Z' },
    previous: { status: 'ativo' },
  },
  'financial.paid': {
    object: { status: 'paid', paid_date: '2026-12-03' },
    previous: { status: 'pending', paid_date: null },
  },
  'publication.updated': { object: { status: 'treated' }, previous: { status: 'new' } },
};

/** A delivery of the event as a subscriber receives it. */
export function eventExample(event: EventType): Json {
  const change = CHANGES[event];
  return {
    id: 'evt_01jd3kc4d6f8h0k2n4q6s8u0w2',
    type: event,
    api_version: 'v1',
    created_at: '2026-11-27T09:41:03.117Z',
    data: {
      object: { ...RESOURCE_EXAMPLES[familyOf(event)], ...change?.object },
      previous_attributes: change?.previous ?? null,
    },
    team_id: 'team_01jd3k0a2c4e6g8j0l2n4q6s8u',
    webhook_id: 'wh_01jd3kc4d6e8f0g2h4j6k8m0n2',
  };
}

export interface CatalogEntry {
  type: EventType;
  description: string;
  example: Json;
  schema: Json;
}

/** Every event the platform emits, in EVENT_TYPES order. */
export const eventCatalog = (): CatalogEntry[] =>
  EVENT_TYPES.map((type) => ({
    type,
    description: EVENT_DESCRIPTIONS[type],
    example: eventExample(type),
    schema: eventPayloadSchema(familyOf(type), DOCUMENT_COMPONENTS),
  }));
