import { p } from '@mikro-orm/mongodb';
import { nullableStrings, signalProperties } from '@lpm/shared/store/entity-properties';
import { storedEntity } from '@lpm/shared/store/entities';
import type { RecordOf } from '@lpm/shared/store/orm';
import { PRIORITIES } from '@lpm/shared/priority';
import { ACTIVITY_STATUSES, ACTIVITY_TYPES, FREQUENCIES, REMINDER_CHANNELS } from '../contract/activity-schemas.ts';
import { COUNTINGS, type DeadlineStart } from '../contract/deadline-schemas.ts';
import type { CourtBranch, Uf } from '@lpm/shared/court-calendar';

export type ActivityType = (typeof ACTIVITY_TYPES)[number];
export type ActivityStatus = (typeof ACTIVITY_STATUSES)[number];
export type Frequency = (typeof FREQUENCIES)[number];
export type Counting = (typeof COUNTINGS)[number];

export interface Reminder {
  enabled: boolean;
  before_minutes: number;
  channels: (typeof REMINDER_CHANNELS)[number][];
}

export interface Recurrence {
  frequency: Frequency;
  interval: number;
  until: string | null;
  count: number | null;
}

/** A deadline to count (the calculator's input). */
export interface DeadlineInput {
  start: DeadlineStart;
  days: number;
  counting?: Counting;
  double?: boolean;
}

/** A deadline rule as an activity keeps it: the input, and the parts of the team's jurisdiction it replaces. */
export interface DeadlineRule extends DeadlineInput {
  jurisdiction?: { uf?: Uf | null; branch?: CourtBranch };
}

export interface TrailDay {
  date: string;
  counted: boolean;
  reason: string | null;
}

/** What a rule computed, as an activity keeps it beside its due date. */
export interface Deadline {
  start_date: string;
  due_date: string;
  publication_date: string | null;
  days: number;
  trail: TrailDay[];
}

/** A Deadline as an activity stores it: the trail packed into one string (domain/deadlines/stored-deadline.ts). */
export type StoredDeadline = Omit<Deadline, 'trail'> & { trail: string | TrailDay[] };

export const ActivityEntity = storedEntity('Activity', 'activities', {
  properties: {
    type: p.enum(ACTIVITY_TYPES),
    title: p.string(),
    description: p.string().strictNullable(),
    status: p.enum(ACTIVITY_STATUSES),
    priority: p.enum(PRIORITIES),
    due_date: p.string().strictNullable(),
    due_time: p.string().strictNullable(),
    // The records it belongs to, the user it is assigned to and the one who made it.
    ...nullableStrings('case_id', 'client_id', 'deal_id', 'assigned_to', 'created_by'),
    reminder: p.json<Reminder>().strictNullable(),
    recurrence: p.json<Recurrence>().strictNullable(),
    metadata: p.json<Record<string, unknown>>(),
    completed_at: p.datetime().strictNullable(),
    ...nullableStrings('completed_by', 'completion_notes'),
    // Recurring series: the first occurrence's due date and this one's place (1 = first).
    ...nullableStrings('series_id', 'series_start'),
    occurrence: p.integer(),
    /**
     * Unique: `<series_id>:<occurrence>` on an occurrence a completion made, so each is
     * made once; the activity's own id on every other. Activities stored before it
     * have none (the unique index is sparse).
     */
    occurrence_key: p.string(),
    /**
     * The series' next occurrence, pending as it will be stored, written by the completion
     * that owes it (in the same document write), null once it is stored. The record type
     * cannot name itself here: it is an ActivityRecord.
     */
    next_occurrence: p.json<Record<string, unknown>>().strictNullable(),
    /** 1 while next_occurrence waits to be stored, else 0: the series repair's equality marker. */
    next_pending: p.integer(),
    // A deadline computed from a rule: the rule, what it computed on the team's
    // court calendar (due_date is its due date), and when that calendar last changed.
    deadline_rule: p.json<DeadlineRule>().strictNullable(),
    deadline: p.json<StoredDeadline>().strictNullable(),
    calendar_at: p.datetime().strictNullable(),
    /** 1 while a rule sets the due date: the equality a court calendar change looks them up by. */
    rule_based: p.integer(),
    // Derived on every write (no collation on FerretDB): sorting and the overdue query.
    priority_rank: p.integer(),
    due_missing: p.integer(),
    /** The due moment (due_date at due_time, 23:59 without one, in the team's zone). */
    due_at: p.datetime().strictNullable(),
    /** 1 while pending or in_progress. */
    open: p.integer(),
    ...signalProperties('due_soon_at', 'overdue_at', 'reminder_at'),
  },
  indexes: [
    { properties: ['team_id', 'due_missing', 'due_at', '_id'] },
    { properties: ['team_id', 'created_at', '_id'] },
    { properties: ['team_id', 'updated_at', '_id'] },
    { properties: ['team_id', 'priority_rank', '_id'] },
    { properties: ['team_id', 'open', 'due_at', '_id'] },
    { properties: ['team_id', 'case_id', 'due_missing', 'due_at', '_id'] },
    { properties: ['team_id', 'deal_id'] },
    { properties: ['team_id', 'client_id'] },
    { properties: ['team_id', 'assigned_to'] },
    { properties: ['next_pending'] },
  ],
  uniques: [{ properties: ['occurrence_key'], options: { sparse: true } }],
});

export type ActivityRecord = RecordOf<typeof ActivityEntity>;
