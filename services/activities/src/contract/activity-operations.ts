// The documentation of the activities and deadlines operations beside their contract: the errors come from
// the contract's constructors and the request schemas (shared/src/http/operation-docs.ts).
import { caseNotFound, clientNotFound, noFieldsToUpdate, userNotFound } from '@lpm/shared/errors';
import type { OperationDocs, ServiceDocs } from '@lpm/shared/http/operation-docs';
import { ID_RULE, LIST_RULE, PUT_RULE, schemaMessage } from '@lpm/shared/http/operation-docs';
import {
  activityNotFound,
  alreadyCompleted,
  completeCancelled,
  dealNotFound,
  deleteCompleted,
  invalidTransition,
} from './activity-errors.ts';

export const ACTIVITY_OPERATIONS: OperationDocs = {
  'GET /v1/activities': {
    operationId: 'listActivities',
    summary: 'List activities',
    description: `The team's activities, by \`due_date\` by default. \`from\`/\`to\` compare \`due_date\`; \`overdue=true\` keeps pending or in_progress activities whose due moment has passed. ${LIST_RULE}`,
    errors: [schemaMessage('type'), schemaMessage('status'), schemaMessage('priority'), schemaMessage('sort')],
  },
  'POST /v1/activities': {
    operationId: 'createActivity',
    summary: 'Create an activity',
    description:
      "Creates an activity with status `pending` (`priority` media by default), linked ids returned flat. The due moment is `due_date` at `due_time` in the team's time zone (23:59 without a time). A `deadline` may send `deadline_rule` instead of `due_date`: the due date is computed on the team's court calendar. A reminder e-mails the assignee `before_minutes` ahead; a recurrence creates the next occurrence when one is completed. Emits `activity.created`, and later `activity.due_soon` (24 h ahead) and `activity.overdue`.",
    errors: [
      schemaMessage('type'),
      schemaMessage('priority'),
      caseNotFound(),
      clientNotFound(),
      dealNotFound(),
      userNotFound(),
    ],
  },
  'GET /v1/activities/overdue': {
    operationId: 'listOverdueActivities',
    summary: 'List overdue activities',
    description: `Pending or in_progress activities whose due moment has passed, with \`days_overdue\` in calendar days of the team's time zone. ${LIST_RULE}`,
    errors: [schemaMessage('sort')],
  },
  'GET /v1/activities/{id}': {
    operationId: 'getActivity',
    summary: 'Read an activity',
    description: `The activity in its detail shape: case, client, assignee (with e-mail), creator and completer as nested objects. ${ID_RULE}`,
    errors: [activityNotFound()],
  },
  'PUT /v1/activities/{id}': {
    operationId: 'updateActivity',
    summary: 'Update an activity',
    description: `${PUT_RULE} Status moves: pending -> in_progress | cancelled | completed; in_progress -> pending | cancelled | completed; completed -> cancelled; cancelled is final. \`status: "completed"\` has the effects of /complete. Changing the due date re-arms the due signals. Emits \`activity.updated\` (and \`activity.completed\`).`,
    examples: { start: { summary: 'Started, due later', value: { status: 'in_progress', due_date: '2026-12-12' } } },
    errors: [
      schemaMessage('type'),
      schemaMessage('status'),
      schemaMessage('priority'),
      noFieldsToUpdate(),
      activityNotFound(),
      caseNotFound(),
      clientNotFound(),
      dealNotFound(),
      userNotFound(),
      invalidTransition(),
    ],
  },
  'PUT /v1/activities/{id}/complete': {
    operationId: 'completeActivity',
    summary: 'Complete an activity',
    description:
      "pending or in_progress -> completed: sets `completed_at`, `completed_by` (the key's user) and `completion_notes`. A recurring activity gets its next occurrence. Emits `activity.completed`.",
    examples: { done: { summary: 'Done, with notes', value: { notes: 'Petição protocolada no PJe' } } },
    errors: [activityNotFound(), alreadyCompleted(), completeCancelled()],
  },
  'DELETE /v1/activities/{id}': {
    operationId: 'deleteActivity',
    summary: 'Delete an activity',
    description:
      'Removes a pending, in_progress or cancelled activity (`deleted: true`); a completed activity can only be cancelled.',
    errors: [activityNotFound(), deleteCompleted()],
  },
  'POST /v1/deadlines/compute': {
    operationId: 'computeDeadline',
    summary: 'Compute a procedural deadline',
    description:
      "Counts a deadline on the team's court calendar (CPC arts. 219, 220 and 224: business days, the start day excluded, weekends, national and court holidays, the recess of art. 220 and the team's closures) and returns the due date with the trail of every day considered. Writes nothing: a read key may call it.",
    errors: [schemaMessage('start'), schemaMessage('days'), schemaMessage('counting')],
  },
};

export const ACTIVITY_DOCS: ServiceDocs = {
  tags: [
    {
      name: 'Activities',
      prefix: '/v1/activities',
      description: 'Tasks, deadlines, meetings, calls, e-mails and notes, with reminders and recurrence.',
      idExample: 'act_01jd3ka2b4c6d8e0f2g4h6j8k0',
    },
    {
      name: 'Deadlines',
      prefix: '/v1/deadlines',
      description: "Procedural deadlines counted on the team's court calendar.",
    },
  ],
  operations: ACTIVITY_OPERATIONS,
};
