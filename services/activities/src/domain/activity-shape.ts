// Read shapes of an activity built from its stored record, the local views of the
// linked case and client, and the team's users.
import { exact } from '@lpm/shared/http/schemas';
import { iso } from '@lpm/shared/time';
import type { DirectoryUser } from '@lpm/shared/upstream/user-directory';
import type { ClientView } from '@lpm/shared/views/client-view-entity';
import type { CaseView } from '@lpm/shared/views/case-view-entity';
import { linkOf } from '@lpm/shared/views/record-links';
import type { ActivityRecord } from '../data/activity-entity.ts';
import { deadlineView } from './deadlines/stored-deadline.ts';
import type {
  ActivityCreated,
  ActivityDetail,
  ActivityListItem,
  OverdueActivity,
} from '../contract/activity-schemas.ts';

/** Fields a client may send on create and update (status: update only). */
export const WRITABLE_FIELDS = [
  'type',
  'title',
  'description',
  'priority',
  'due_date',
  'due_time',
  'case_id',
  'client_id',
  'deal_id',
  'assigned_to',
  'reminder',
  'recurrence',
  'metadata',
  'deadline_rule',
] as const;

export interface Links {
  cases: Map<string, CaseView>;
  clients: Map<string, ClientView>;
  users: Map<string, DirectoryUser>;
}

const user = (id: string | null, links: Links) => linkOf(id, links.users, ['name']);
const caseWithNumber = (r: ActivityRecord, links: Links) => linkOf(r.case_id, links.cases, ['title', 'number']);

/** The fields a list shows first, as every read shape does. */
const listed = (r: ActivityRecord) => ({
  id: r._id,
  type: r.type,
  title: r.title,
  description: r.description,
  status: r.status,
  priority: r.priority,
  due_date: r.due_date,
});

const head = (r: ActivityRecord) => ({ ...listed(r), due_time: r.due_time });

const tail = (r: ActivityRecord) => ({
  // Absent from activities stored before deadline rules existed.
  deadline_rule: r.deadline_rule ?? null,
  deadline: r.deadline ? deadlineView(r.deadline) : null,
  reminder: r.reminder,
  recurrence: r.recurrence,
  metadata: r.metadata ?? {},
  completed_at: iso(r.completed_at),
  completion_notes: r.completion_notes,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

/** The detail read shape, as GET by id answers and events carry. */
export function detailShape(r: ActivityRecord, links: Links): ActivityDetail {
  return exact<ActivityDetail>()({
    ...head(r),
    case: caseWithNumber(r, links),
    client: linkOf(r.client_id, links.clients, ['name']),
    deal_id: r.deal_id,
    assigned_to: linkOf(r.assigned_to, links.users, ['name', 'email']),
    created_by: user(r.created_by, links),
    ...tail(r),
    completed_by: user(r.completed_by, links),
  });
}

/** The create response: links as flat ids (docs/decisions.md §10). */
export function createdShape(r: ActivityRecord): ActivityCreated {
  return exact<ActivityCreated>()({
    ...head(r),
    case_id: r.case_id,
    client_id: r.client_id,
    deal_id: r.deal_id,
    assigned_to: r.assigned_to,
    created_by: r.created_by,
    ...tail(r),
  });
}

export function listItemShape(r: ActivityRecord, links: Links): ActivityListItem {
  return exact<ActivityListItem>()({
    ...listed(r),
    case: caseWithNumber(r, links),
    assigned_to: user(r.assigned_to, links),
    created_at: iso(r.created_at),
  });
}

/** What the short lists (a case's activities, the overdue ones) show first. */
const brief = (r: ActivityRecord) => ({
  id: r._id,
  type: r.type,
  title: r.title,
  status: r.status,
  priority: r.priority,
  due_date: r.due_date,
});

/** The items of GET /v1/cases/{id}/activities (served to the cases service). */
export function caseActivityShape(r: ActivityRecord) {
  return {
    ...brief(r),
    completed_at: iso(r.completed_at),
    created_at: iso(r.created_at),
  };
}

/** Calendar days from `dueDate` to `today` (both YYYY-MM-DD). */
export function daysBetween(dueDate: string, today: string): number {
  return Math.round((Date.parse(`${today}T00:00:00Z`) - Date.parse(`${dueDate}T00:00:00Z`)) / 86_400_000);
}

export function overdueItemShape(r: ActivityRecord, links: Links, today: string): OverdueActivity {
  return exact<OverdueActivity>()({
    ...brief(r),
    days_overdue: r.due_date ? Math.max(0, daysBetween(r.due_date, today)) : 0,
    case: linkOf(r.case_id, links.cases, ['title']),
  });
}
