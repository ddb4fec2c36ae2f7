import {
  arrayOf,
  boolean,
  date,
  enumOf,
  integer,
  longText,
  metadata,
  name,
  named,
  nullable,
  nullableShape,
  object,
  okResponse,
  out,
  pageResponse,
  shape,
  text,
  typed,
  type Schema,
  type Static,
} from '@lpm/shared/http/schemas';
import { listQuerySchema } from '@lpm/shared/http/pagination';
import { caseLink, nameLink } from '@lpm/shared/http/common-schemas';
import { deadlineRule, deadlineShape } from './deadline-schemas.ts';

export const ACTIVITY_TYPES = ['task', 'deadline', 'meeting', 'call', 'email', 'note'] as const;
export const ACTIVITY_STATUSES = ['pending', 'in_progress', 'completed', 'cancelled'] as const;
export const ACTIVITY_PRIORITIES = ['alta', 'media', 'baixa'] as const;
export const REMINDER_CHANNELS = ['email', 'push', 'sms'] as const;
export const FREQUENCIES = ['daily', 'weekly', 'monthly', 'yearly'] as const;

export const ACTIVITY_SORT_FIELDS = ['due_date', 'created_at', 'updated_at', 'priority'] as const;

const id = text(100);
const type = enumOf(ACTIVITY_TYPES, 'Invalid type');
const status = enumOf(ACTIVITY_STATUSES, 'Invalid status');
const priority = enumOf(ACTIVITY_PRIORITIES, 'Invalid priority');
const dueTime = typed<string>({
  type: 'string',
  pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$',
  'x-message': 'due_time must be a time (HH:mm)',
});

const reminder = object({
  enabled: boolean(),
  before_minutes: integer({ minimum: 0, maximum: 525_600, 'x-message': 'before_minutes must be an integer >= 0' }),
  channels: arrayOf(enumOf(REMINDER_CHANNELS, 'Invalid channel'), { maxItems: 3, uniqueItems: true }),
});

const recurrence = object(
  {
    frequency: enumOf(FREQUENCIES, 'Invalid frequency'),
    interval: integer({ minimum: 1, maximum: 1000, 'x-message': 'interval must be an integer >= 1' }),
    until: nullable(date()),
    count: nullable(integer({ minimum: 1, maximum: 1000, 'x-message': 'count must be an integer >= 1' })),
  },
  ['frequency'],
);

const activityFields = {
  type,
  title: name(),
  description: nullable(longText()),
  priority,
  due_date: nullable(date()),
  due_time: nullable(dueTime),
  case_id: nullable(id),
  client_id: nullable(id),
  deal_id: nullable(id),
  assigned_to: nullable(id),
  reminder: nullable(reminder),
  recurrence: nullable(recurrence),
  metadata: nullable(metadata()),
  /** type deadline only, instead of due_date: the due date is computed on the team's court calendar. */
  deadline_rule: nullable(deadlineRule),
};

export const createActivityBody = {
  ...named(
    'CreateActivityRequest',
    'A new activity: type and title are required; a deadline may send deadline_rule instead of due_date.',
    object(activityFields, ['type', 'title']),
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
} as ReturnType<typeof object<typeof activityFields, 'type' | 'title'>>;
export const updateActivityBody = named(
  'UpdateActivityRequest',
  'Any subset of the activity fields, and a status move.',
  object({ ...activityFields, status }),
);
export const completeActivityBody = named(
  'CompleteActivityRequest',
  'Completion notes.',
  typed<{ notes?: string | null }>({
    type: 'object',
    additionalProperties: false,
    properties: { notes: nullable(longText()) },
  }),
);

const boolQuery = typed<boolean>({ type: 'boolean', 'x-message': 'overdue must be true or false' });

export const listActivitiesQuery = listQuerySchema(ACTIVITY_SORT_FIELDS, {
  type,
  status,
  priority,
  case_id: id,
  client_id: id,
  deal_id: id,
  assigned_to: id,
  from: date(),
  to: date(),
  overdue: boolQuery,
});

export const overdueQuery = listQuerySchema(ACTIVITY_SORT_FIELDS);

export type CreateActivityBody = Static<typeof createActivityBody>;
export type UpdateActivityBody = Static<typeof updateActivityBody>;
export type ActivityListQuery = Static<typeof listActivitiesQuery>;

const { string, nullableString, integer: int, freeObject } = out;
const nullableObject: Schema = { type: ['object', 'null'], additionalProperties: true };

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

const detail = named(
  'Activity',
  'An activity in its detail read shape.',
  shape({
    ...common,
    case: caseLink,
    client: nameLink,
    deal_id: nullableString,
    assigned_to: nullableShape({ id: string, name: nullableString, email: nullableString }),
    created_by: nameLink,
    completed_by: nameLink,
  }),
);

const created = named(
  'ActivityCreated',
  'A created activity: links as flat ids.',
  shape({
    ...common,
    case_id: nullableString,
    client_id: nullableString,
    deal_id: nullableString,
    assigned_to: nullableString,
    created_by: nullableString,
  }),
);

const listItem = named(
  'ActivityListItem',
  'An activity in a list.',
  shape({
    ...listed,
    case: caseLink,
    assigned_to: nameLink,
    created_at: string,
  }),
);

const overdueItem = named(
  'OverdueActivity',
  'An overdue activity.',
  shape({
    id: string,
    type: string,
    title: string,
    status: string,
    priority: string,
    due_date: nullableString,
    days_overdue: int,
    case: nullableShape({ id: string, title: nullableString }),
  }),
);

const completed = named(
  'ActivityCompleted',
  'A completed activity.',
  shape({
    id: string,
    status: string,
    completed_at: nullableString,
    completed_by: nameLink,
    completion_notes: nullableString,
  }),
);
const deleted = named('ActivityDeleted', 'A removed activity.', shape({ id: string, deleted: { type: 'boolean' } }));

export type ActivityDetail = Static<typeof detail>;
export type ActivityCompleted = Static<typeof completed>;
export type ActivityDeleted = Static<typeof deleted>;
export type ActivityCreated = Static<typeof created>;
export type ActivityListItem = Static<typeof listItem>;
export type OverdueActivity = Static<typeof overdueItem>;

export const responses = {
  detail: okResponse(200, detail),
  created: okResponse(201, created),
  /** id, the fields sent (status moves add what they set) and updated_at. */
  updated: okResponse(
    200,
    named(
      'ActivityChanges',
      'id, the fields sent (normalized; status moves add what they set) and updated_at.',
      shape({
        ...(created.properties as Record<string, Schema>),
        completed_by: nameLink,
      }),
      { partial: true },
    ),
  ),
  completed: okResponse(200, completed),
  deleted: okResponse(200, deleted),
  list: pageResponse(listItem),
  overdue: pageResponse(overdueItem),
};
