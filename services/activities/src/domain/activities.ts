// Activity use cases (docs/decisions.md §5, "Activities"): status moves, completion and
// recurrence, links checked at write time, and the time-driven signals (due_soon,
// overdue, the e-mail reminder) armed by every write that changes what they
// depend on. Every write stores the record and its events in one document write.
import { FieldChanges, trimmedText } from '@lpm/shared/changes';
import { noFieldsToUpdate } from '@lpm/shared/errors';
import { newEvent, type DomainEvent } from '@lpm/shared/events';
import type { ListQuery } from '@lpm/shared/http/pagination';
import { exact } from '@lpm/shared/http/schemas';
import type { Logger } from '@lpm/shared/logger';
import type { Identity } from '@lpm/shared/identity';
import { isId, newId } from '@lpm/shared/ids';
import { dayIn, iso } from '@lpm/shared/time';
import type { Caller } from '@lpm/shared/upstream/service-client';
import type { CaseLinks } from '@lpm/shared/views/case-links';
import type { ClientLinks } from '@lpm/shared/views/client-links';
import { RecordLinks, type LinkFields, type UserLookup } from '@lpm/shared/views/record-links';
import type { ActivityRecord, ActivityStatus, Recurrence, Reminder } from '../data/activity-entity.ts';
import type { ActivitiesRepository, ActivityFilter, CountKind } from '../data/activities-repository.ts';
import type {
  ActivityCompleted,
  ActivityDeleted,
  ActivityListQuery,
  CreateActivityBody,
  UpdateActivityBody,
} from '../contract/activity-schemas.ts';
import {
  alreadyCompleted,
  completeCancelled,
  dealNotFound,
  deleteCompleted,
  invalidTransition,
} from '../contract/activity-errors.ts';
import {
  WRITABLE_FIELDS,
  caseActivityShape,
  createdShape,
  detailShape,
  listItemShape,
  overdueItemShape,
  type Links,
} from './activity-shape.ts';
import { NOT_COMPLETED, SeriesRepair, owedOccurrence, owing, startSeries } from './series-occurrences.ts';
import { derivedFields, signalsOf } from './activity-timing.ts';
import { activitySyncWork } from './activity-syncs.ts';
import { ruleFieldsOf, withRule } from './deadline-activities.ts';
import { deadlineView } from './deadlines/stored-deadline.ts';
import type { TeamSyncWork } from '@lpm/shared/jobs/team-syncs';

export interface ActivitiesDeps {
  activities: ActivitiesRepository;
  caseLinks: CaseLinks;
  clientLinks: ClientLinks;
  deals: { exists(who: Caller, dealId: string): Promise<boolean> };
  users: UserLookup;
  /** The clock (tests move it). */
  now?: () => Date;
  logger?: Logger;
}

export type Who = Pick<Identity, 'teamId' | 'userId' | 'settings'>;

/** Status moves allowed through PUT (docs/decisions.md §5); the same status is no move. */
const MOVES: Record<ActivityStatus, ActivityStatus[]> = {
  pending: ['in_progress', 'cancelled', 'completed'],
  in_progress: ['pending', 'cancelled', 'completed'],
  completed: ['cancelled'],
  cancelled: [],
};

const fields = new FieldChanges<ActivityRecord>({
  empty: { metadata: {} },
  normalize: {
    title: trimmedText('title'),
    reminder: (r): Reminder => ({
      enabled: r.enabled ?? true,
      before_minutes: r.before_minutes ?? 0,
      channels: r.channels ?? ['email'],
    }),
    recurrence: (r): Recurrence => ({
      frequency: r.frequency!,
      interval: r.interval ?? 1,
      until: r.until ?? null,
      count: r.count ?? null,
    }),
  },
});

const ARMING: readonly string[] = ['due_date', 'due_time', 'status', 'reminder', 'assigned_to'];

/** The links of an activity as RecordLinks looks them up: its case, its client, and its users. */
const linksOf = (
  r: Partial<Pick<ActivityRecord, 'case_id' | 'client_id' | 'assigned_to' | 'created_by' | 'completed_by'>>,
): LinkFields[] => [
  { case_id: r.case_id, client_id: r.client_id, responsible_id: r.assigned_to },
  { responsible_id: r.created_by },
  { responsible_id: r.completed_by },
];

type LinkBody = {
  case_id?: string | null;
  client_id?: string | null;
  deal_id?: string | null;
  assigned_to?: string | null;
};

export class Activities {
  private readonly deps: ActivitiesDeps;
  private readonly recordLinks: RecordLinks;

  private readonly series: SeriesRepair;

  constructor(deps: ActivitiesDeps) {
    this.deps = deps;
    this.recordLinks = new RecordLinks({ clients: deps.clientLinks, cases: deps.caseLinks, users: deps.users });
    this.series = new SeriesRepair({
      activities: deps.activities,
      detailOf: (r) => this.detailOf(r),
      logger: deps.logger,
    });
  }

  private now(): Date {
    return this.deps.now ? this.deps.now() : new Date();
  }

  /** The links of `records`; those in `known` (what a check found) are not read back. */
  private links(teamId: string, records: Parameters<typeof linksOf>[0][], known?: Links): Promise<Links> {
    return this.recordLinks.of(teamId, records.flatMap(linksOf), known);
  }

  /** The detail read shape, as events carry it. */
  async detailOf(record: ActivityRecord, known?: Links) {
    return detailShape(record, await this.links(record.team_id, [record], known));
  }

  /** Checks the links a write sets (404 with that resource's message when one is not the team's); resolves with what it found. */
  private async checkLinks(who: Who, body: LinkBody): Promise<Links> {
    const { case_id, client_id, deal_id, assigned_to } = body;
    const [found] = await Promise.all([
      this.recordLinks.check(who, { case_id, client_id, responsible_id: assigned_to }),
      typeof deal_id === 'string' ? this.checkDeal(who, deal_id) : null,
    ]);
    return found;
  }

  private async checkDeal(who: Who, dealId: string): Promise<void> {
    if (!isId('deal', dealId) || !(await this.deps.deals.exists(who, dealId))) throw dealNotFound();
  }

  async create(who: Who, sent: CreateActivityBody) {
    const body = withRule(sent, who.settings.court_calendar);
    const checked = await this.checkLinks(who, body);
    const now = this.now();
    const tz = who.settings.timezone;
    const id = newId('act');
    const initial = fields.initial(WRITABLE_FIELDS, body);
    const base = {
      _id: id,
      team_id: who.teamId,
      ...initial,
      ...ruleFieldsOf(initial, who.settings.court_calendar),
      calendar_at: null,
      priority: body.priority ?? ('media' as const),
      status: 'pending' as const,
      created_by: who.userId,
      ...NOT_COMPLETED,
      created_at: now,
      updated_at: now,
      version: 1,
    };
    const series = base.recurrence
      ? { series_id: id, series_start: base.due_date ?? dayIn(tz, now), occurrence: 1 }
      : { series_id: null, series_start: null, occurrence: 1 };
    const owes = { occurrence_key: id, next_occurrence: null, next_pending: 0 };
    const record: ActivityRecord = {
      ...base,
      ...series,
      ...owes,
      ...derivedFields(base, tz),
      ...signalsOf(base, tz, now),
    };
    const event = newEvent('activity.created', who.teamId, await this.detailOf(record, checked), null, who.userId);
    await this.deps.activities.insert(record, [event]);
    return createdShape(record);
  }

  /** The team syncs of activities (activity-syncs.ts). */
  syncWork(): Record<'court-calendar' | 'time-zone', TeamSyncWork<ActivityRecord>> {
    return activitySyncWork({
      activities: this.deps.activities,
      now: () => this.now(),
      detailsOf: async (teamId, records) => {
        const links = await this.links(teamId, records);
        return (r) => detailShape(r, links);
      },
    });
  }

  async get(who: Who, id: string) {
    return this.detailOf(await this.deps.activities.get(who.teamId, id));
  }

  async list(who: Who, q: ActivityListQuery) {
    const { type, status, priority, case_id, client_id, deal_id, assigned_to, from, to } = q;
    const filter: ActivityFilter = { type, status, priority, case_id, client_id, deal_id, assigned_to, from, to };
    if (q.overdue) filter.overdueAt = this.now();
    const { records, total } = await this.deps.activities.list(who.teamId, filter, q);
    const links = await this.links(who.teamId, records);
    return { items: records.map((r) => listItemShape(r, links)), total };
  }

  async overdue(who: Who, q: ListQuery) {
    const now = this.now();
    const { records, total } = await this.deps.activities.list(who.teamId, { overdueAt: now }, q);
    const links = await this.links(who.teamId, records);
    const today = dayIn(who.settings.timezone, now);
    return { items: records.map((r) => overdueItemShape(r, links, today)), total };
  }

  async update(who: Who, id: string, input: UpdateActivityBody) {
    if (Object.keys(input).length === 0) throw noFieldsToUpdate();
    const court = who.settings.court_calendar;
    const body = { ...withRule(input, court) };
    const checked = await this.checkLinks(who, body);
    const tz = who.settings.timezone;
    const before = await this.deps.activities.get(who.teamId, id);
    // A due date set by hand replaces the rule that computed the previous one.
    if (input.due_date !== undefined && input.deadline_rule === undefined && before.deadline_rule)
      body.deadline_rule = null;
    const links = await this.links(who.teamId, [before, { ...body, completed_by: who.userId }], checked);
    let owed: ActivityRecord | null = null;
    const answer = await this.deps.activities.update(who.teamId, id, async (current) => {
      const now = this.now();
      if (body.status !== undefined && body.status !== current.status && !MOVES[current.status].includes(body.status))
        throw invalidTransition();
      const { next, sent } = fields.apply(current, body, [...WRITABLE_FIELDS, 'status']);
      const completing = next.status === 'completed' && current.status !== 'completed';
      if (completing) Object.assign(next, { completed_at: now, completed_by: who.userId });
      startSeries(next, id, tz, now);

      Object.assign(next, ruleFieldsOf(next, court));
      owed = completing ? owedOccurrence(next, tz, now) : null;
      const { changed, previous } = fields.diff(
        [...WRITABLE_FIELDS, 'status', 'completed_at', 'completed_by'],
        current,
        next,
      );
      if (changed.length === 0) return { result: { id, ...sent, updated_at: iso(current.updated_at) } };
      next.updated_at = now;
      Object.assign(next, derivedFields(next, tz));
      if (changed.some((f) => ARMING.includes(f))) Object.assign(next, signalsOf(next, tz, now));

      const detail = detailShape(next, links);
      const events: DomainEvent[] = [newEvent('activity.updated', who.teamId, detail, previous, who.userId)];
      if (completing)
        events.push(
          newEvent(
            'activity.completed',
            who.teamId,
            detail,
            { status: current.status, completed_at: null, completed_by: null },
            who.userId,
          ),
        );
      const set: Partial<ActivityRecord> = {
        updated_at: now,
        ...derivedFields(next, tz),
        due_soon_at: next.due_soon_at,
        overdue_at: next.overdue_at,
        reminder_at: next.reminder_at,
        series_id: next.series_id,
        series_start: next.series_start,
        occurrence: next.occurrence,
        deadline: next.deadline,
        rule_based: next.rule_based,
        ...owing(owed),
      };
      for (const f of changed) Object.assign(set, { [f]: next[f] });
      const answer: Record<string, unknown> = { id, ...sent, updated_at: iso(now) };
      if (changed.includes('deadline_rule')) answer.deadline = next.deadline && deadlineView(next.deadline);
      if (completing) Object.assign(answer, { completed_at: iso(now), completed_by: detail.completed_by });
      return { result: answer, write: { set, events } };
    });
    if (owed) await this.series.settleAfterCompletion(who, id, owed);
    return answer;
  }

  async complete(who: Who, id: string, notes: string | null | undefined) {
    const tz = who.settings.timezone;
    const before = await this.deps.activities.get(who.teamId, id);
    if (before.status === 'completed') throw alreadyCompleted();
    if (before.status === 'cancelled') throw completeCancelled();
    const links = await this.links(who.teamId, [before, { completed_by: who.userId }]);
    let owed: ActivityRecord | null = null;
    const done = await this.deps.activities.update(who.teamId, id, async (current) => {
      if (current.status === 'completed') throw alreadyCompleted();
      if (current.status === 'cancelled') throw completeCancelled();
      const now = this.now();
      const next: ActivityRecord = {
        ...current,
        status: 'completed',
        completed_at: now,
        completed_by: who.userId,
        completion_notes: notes ?? null,
        updated_at: now,
      };
      Object.assign(next, derivedFields(next, tz), signalsOf(next, tz, now));
      owed = owedOccurrence(next, tz, now);
      const detail = detailShape(next, links);
      const previous = {
        status: current.status,
        completed_at: null,
        completed_by: null,
        completion_notes: current.completion_notes,
      };
      const set: Partial<ActivityRecord> = {
        status: 'completed',
        completed_at: now,
        completed_by: who.userId,
        completion_notes: next.completion_notes,
        updated_at: now,
        ...derivedFields(next, tz),
        due_soon_at: null,
        overdue_at: null,
        reminder_at: null,
        ...owing(owed),
      };
      const answer = exact<ActivityCompleted>()({
        id,
        status: 'completed',
        completed_at: iso(now),
        completed_by: detail.completed_by,
        completion_notes: next.completion_notes,
      });
      return {
        result: answer,
        write: { set, events: [newEvent('activity.completed', who.teamId, detail, previous, who.userId)] },
      };
    });
    if (owed) await this.series.settleAfterCompletion(who, id, owed);
    return done;
  }

  /** The series repair: the occurrences owed by completions whose process died, or whose store failed, before storing them. */
  settleOwedOccurrences(): Promise<number> {
    return this.series.settleOwedOccurrences();
  }

  async remove(who: Who, id: string) {
    const before = await this.deps.activities.get(who.teamId, id);
    const links = await this.links(who.teamId, [before]);
    return this.deps.activities.remove(who.teamId, id, async (current) => {
      if (current.status === 'completed') throw deleteCompleted();
      // Not one of the documented events (webhooks never see it): it tells the case its activity is gone.
      const event = newEvent('activity.deleted', who.teamId, detailShape(current, links), null, who.userId);
      return { result: exact<ActivityDeleted>()({ id, deleted: true }), events: [event] };
    });
  }

  // Questions other services ask (internal endpoints).

  async listForCase(teamId: string, caseId: string, q: ListQuery) {
    const { records, total } = await this.deps.activities.list(teamId, { case_id: caseId }, q);
    return { items: records.map(caseActivityShape), total };
  }

  /** A record's activities: all of them, the open ones, and the open ones past their due moment. */
  async countsOf(teamId: string, kind: CountKind, id: string) {
    const [all, open] = await Promise.all([
      this.deps.activities.countBy(teamId, kind, [id]),
      this.deps.activities.openOf(teamId, kind, id, this.now()),
    ]);
    return { count: all[id] ?? 0, ...open };
  }

  countBy(teamId: string, kind: CountKind, ids: string[]) {
    return this.deps.activities.countBy(teamId, kind, ids);
  }
}
