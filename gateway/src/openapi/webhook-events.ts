// When each event is emitted (interface-spec "Events", decisions §5), and the
// resource its data.object carries.
import type { EventType } from '@lpm/shared/events';

export const EVENT_DOCS: Record<EventType, string> = {
  'case.created': 'A case is created (in the app or by API).',
  'case.updated': 'Case data, phase or priority changes, or an archived case is restored.',
  'case.archived': 'Case status becomes arquivado.',
  'case.phase_changed': 'The case moves in the kanban.',
  'case.sla_warning': "24 hours before the end of the SLA date (23:59:59, team time zone), once, ativo cases only.",
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
};

/**
 * The component schema of each event family's data.object (its detail read
 * shape), less the fields a read computes and an event does not carry.
 */
export const EVENT_RESOURCES: Record<string, { schema: string; omit?: string[] }> = {
  case: { schema: 'Case' },
  activity: { schema: 'Activity' },
  client: { schema: 'Client' },
  deal: { schema: 'Deal', omit: ['activities_count', 'ai_insights'] },
  financial: { schema: 'FinancialRecord' },
};
