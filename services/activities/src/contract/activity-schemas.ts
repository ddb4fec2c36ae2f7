import * as s from '@lpm/shared/http/schemas';
import { listQuerySchema } from '@lpm/shared/http/pagination';
import { caseLink, nameLink } from '@lpm/shared/http/common-schemas';
import { recordResponses } from '@lpm/shared/http/record-responses';
import { contactLink, listItemShape } from '@lpm/shared/http/read-shapes';
import { PRIORITIES } from '@lpm/shared/priority';
import { deadlineRule, deadlineShape } from './deadline-schemas.ts';

export const ACTIVITY_TYPES = ['task', 'deadline', 'meeting', 'call', 'email', 'note'] as const;
export const ACTIVITY_STATUSES = ['pending', 'in_progress', 'completed', 'cancelled'] as const;
export const REMINDER_CHANNELS = ['email', 'push', 'sms'] as const;
export const FREQUENCIES = ['daily', 'weekly', 'monthly', 'yearly'] as const;

export const ACTIVITY_SORT_FIELDS = ['due_date', 'created_at', 'updated_at', 'priority'] as const;

const id = s.text(100);
const type = s.enumOf(ACTIVITY_TYPES, 'Invalid type');
const status = s.enumOf(ACTIVITY_STATUSES, 'Invalid status');
const priority = s.enumOf(PRIORITIES, 'Invalid priority');
const dueTime = s.typed<string>({
  type: 'string',
  pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$',
  'x-message': 'due_time must be a time (HH:mm)',
});

const reminder = s.object({
  enabled: s.boolean(),
  before_minutes: s.integer({ minimum: 0, maximum: 525_600, 'x-message': 'before_minutes must be an integer >= 0' }),
  channels: s.arrayOf(s.enumOf(REMINDER_CHANNELS, 'Invalid channel'), { maxItems: 3, uniqueItems: true }),
});

const recurrence = s.object(
  {
    frequency: s.enumOf(FREQUENCIES, 'Invalid frequency'),
    interval: s.integer({ minimum: 1, maximum: 1000, 'x-message': 'interval must be an integer >= 1' }),
    until: s.nullable(s.date()),
    count: s.nullable(s.integer({ minimum: 1, maximum: 1000, 'x-message': 'count must be an integer >= 1' })),
  },
  ['frequency'],
);

const activityFields = {
  type,
  title: s.name(),
  description: s.nullable(s.longText()),
  priority,
  due_date: s.nullable(s.date()),
  due_time: s.nullable(dueTime),
  case_id: s.nullable(id),
  client_id: s.nullable(id),
  deal_id: s.nullable(id),
  assigned_to: s.nullable(id),
  reminder: s.nullable(reminder),
  recurrence: s.nullable(recurrence),
  metadata: s.nullable(s.metadata()),
  /** type deadline only, instead of due_date: the due date is computed on the team's court calendar. */
  deadline_rule: s.nullable(deadlineRule),
};

export const createActivityBody = {
  ...s.named(
    'CreateActivityRequest',
    'A new activity: type and title are required; a deadline may send deadline_rule instead of due_date.',
    s.object(activityFields, ['type', 'title']),
  ),
  examples: [
    { type: 'task', title: 'Protocolar petição', due_date: '2025-03-10', priority: 'alta' },
    {
      type: 'deadline',
      title: 'Contestação',
      case_id: 'case_01jn0000000000000000000000',
      deadline_rule: { start: { made_available: '2025-11-13' }, days: 15 },
    },
  ],
} as ReturnType<typeof s.object<typeof activityFields, 'type' | 'title'>>;
export const updateActivityBody = s.named(
  'UpdateActivityRequest',
  'Any subset of the activity fields, and a status move.',
  s.object({ ...activityFields, status }),
);
export const completeActivityBody = s.named(
  'CompleteActivityRequest',
  'Completion notes.',
  s.typed<{ notes?: string | null }>({
    type: 'object',
    additionalProperties: false,
    properties: { notes: s.nullable(s.longText()) },
  }),
);

const boolQuery = s.typed<boolean>({ type: 'boolean', 'x-message': 'overdue must be true or false' });

export const listActivitiesQuery = listQuerySchema(ACTIVITY_SORT_FIELDS, {
  type,
  status,
  priority,
  case_id: id,
  client_id: id,
  deal_id: id,
  assigned_to: id,
  from: s.date(),
  to: s.date(),
  overdue: boolQuery,
});

export const overdueQuery = listQuerySchema(ACTIVITY_SORT_FIELDS);

export type CreateActivityBody = s.Static<typeof createActivityBody>;
export type UpdateActivityBody = s.Static<typeof updateActivityBody>;
export type ActivityListQuery = s.Static<typeof listActivitiesQuery>;

const { string, nullableString, integer: int, freeObject } = s.out;
const nullableObject: s.Schema = { type: ['object', 'null'], additionalProperties: true };

/** The fields a list shows first, as every read shape does. */
const listed = {
  id: string,
  type: string,
  title: string,
  description: nullableString,
  status: string,
  priority: string,
  due_date: nullableString,
};

const common = {
  ...listed,
  due_time: nullableString,
  reminder: nullableObject,
  recurrence: nullableObject,
  deadline_rule: nullableObject,
  deadline: { ...deadlineShape, type: ['object', 'null'] },
  metadata: freeObject,
  completed_at: nullableString,
  completion_notes: nullableString,
  created_at: string,
  updated_at: string,
};

const detail = s.named(
  'Activity',
  'An activity in its detail read shape.',
  s.shape({
    ...common,
    case: caseLink,
    client: nameLink,
    deal_id: nullableString,
    assigned_to: contactLink,
    created_by: nameLink,
    completed_by: nameLink,
  }),
);

const created = s.named(
  'ActivityCreated',
  'A created activity: links as flat ids.',
  s.shape({
    ...common,
    case_id: nullableString,
    client_id: nullableString,
    deal_id: nullableString,
    assigned_to: nullableString,
    created_by: nullableString,
  }),
);

const listItem = listItemShape('Activity', 'An activity', {
  ...listed,
  case: caseLink,
  assigned_to: nameLink,
  created_at: string,
});

const overdueItem = s.named(
  'OverdueActivity',
  'An overdue activity.',
  s.shape({
    id: string,
    type: string,
    title: string,
    status: string,
    priority: string,
    due_date: nullableString,
    days_overdue: int,
    case: s.nullableShape({ id: string, title: nullableString }),
  }),
);

const completed = s.named(
  'ActivityCompleted',
  'A completed activity.',
  s.shape({
    id: string,
    status: string,
    completed_at: nullableString,
    completed_by: nameLink,
    completion_notes: nullableString,
  }),
);
const deleted = s.named(
  'ActivityDeleted',
  'A removed activity.',
  s.shape({ id: string, deleted: { type: 'boolean' } }),
);

export type ActivityDetail = s.Static<typeof detail>;
export type ActivityCompleted = s.Static<typeof completed>;
export type ActivityDeleted = s.Static<typeof deleted>;
export type ActivityCreated = s.Static<typeof created>;
export type ActivityListItem = s.Static<typeof listItem>;
export type OverdueActivity = s.Static<typeof overdueItem>;

const changes = s.named(
  'ActivityChanges',
  'id, the fields sent (normalized; status moves add what they set) and updated_at.',
  s.shape({
    ...(created.properties as Record<string, s.Schema>),
    completed_by: nameLink,
  }),
  { partial: true },
);

export const responses = {
  ...recordResponses({ detail, created, changes, listItem }),
  completed: s.okResponse(200, completed),
  deleted: s.okResponse(200, deleted),
  overdue: s.pageResponse(overdueItem),
};

/** The contract of the record routes (shared/src/service/record-routes.ts): the DELETE removes the activity. */
export const recordContract = {
  schemas: { list: listActivitiesQuery, create: createActivityBody, update: updateActivityBody },
  responses: { ...responses, removed: responses.deleted },
};
