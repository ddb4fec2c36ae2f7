// Case use cases (docs/decisions.md §5 "Cases"): phases from the team's kanban, links to
// clients and users checked at write time, SLA signals armed by every write, and
// a timeline kept in the case. Every write stores the record, its timeline entries
// and its events in one document write (data/cases-repository.ts).
import { FieldChanges, trimmedText } from '@lpm/shared/changes';
import { serviceUnavailable, noFieldsToUpdate } from '@lpm/shared/errors';
import { newEvent, type DomainEvent } from '@lpm/shared/events';
import type { ListQuery } from '@lpm/shared/http/pagination';
import { exact } from '@lpm/shared/http/schemas';
import type { Identity } from '@lpm/shared/identity';
import { newId } from '@lpm/shared/ids';
import { armDeadline, rearmed } from '@lpm/shared/jobs/time-signals';
import { timeZoneSync } from '@lpm/shared/jobs/time-zone-sync';
import type { TeamSyncWork } from '@lpm/shared/jobs/team-syncs';
import { iso, zonedDays, zonedMoment } from '@lpm/shared/time';
import type { CaseRecord, TimelineEntry } from '../data/case-entity.ts';
import type { CaseFilter, CasesRepository } from '../data/cases-repository.ts';
import type { CaseArchived, CaseListQuery, CreateCaseBody, UpdateCaseBody } from '../contract/case-schemas.ts';
import { invalidCnjNumber, invalidPhase } from '../contract/case-errors.ts';
import { normalizeCaseNumber, numberInfo } from './cnj-number.ts';
import { CaseActivityCounts, type ActivityEventNews } from './case-activity-counts.ts';
import { timelineEntry, timelineOf, withEntries } from './case-timeline.ts';
import {
  WRITABLE_FIELDS,
  clientCaseShape,
  createdShape,
  derivedFields,
  detailShape,
  listItemShape,
} from './case-shape.ts';
import { factsOfView, type ClientLinks } from '@lpm/shared/views/client-links';
import type { ClientFacts } from '@lpm/shared/upstream/clients-service';
import { RecordLinks, type Links, type UserLookup } from '@lpm/shared/views/record-links';

/** The activities of a case, which the activities service owns. */
export interface CaseActivities {
  listForCase(who: Who, caseId: string, q: ListQuery): Promise<{ items: unknown[]; total: number }>;
}

export interface CasesDeps {
  cases: CasesRepository;
  clientLinks: ClientLinks;
  users: UserLookup;
  activities: CaseActivities;
}

export type Who = Pick<Identity, 'teamId' | 'userId' | 'settings'>;

const fields = new FieldChanges<CaseRecord>({
  empty: { labels: [], metadata: {} },
  normalize: {
    title: trimmedText('title'),
    number: normalizeCaseNumber,
  },
});

/** The instants of the SLA signals: the end of `sla_date` in the team's zone, for ativo cases only. */
function slaSignals(r: Pick<CaseRecord, 'status' | 'sla_date'>, timeZone: string, now = new Date()) {
  const deadline = r.status === 'ativo' && r.sla_date ? zonedMoment(r.sla_date, timeZone) : null;
  const { warnAt, overdueAt } = armDeadline(deadline, now);
  return { sla_warning_at: warnAt, sla_overdue_at: overdueAt };
}

export class Cases {
  private readonly deps: CasesDeps;
  private readonly links: RecordLinks;

  private readonly counts: CaseActivityCounts;

  constructor(deps: CasesDeps) {
    this.deps = deps;
    this.links = new RecordLinks({ clients: deps.clientLinks, users: deps.users });
    this.counts = new CaseActivityCounts(deps.cases);
  }

  /** The detail read shape, as events carry it; the links in `known` (what a check found) are not read back. */
  async detailOf(record: CaseRecord, known?: Links) {
    return detailShape(record, await this.links.of(record.team_id, [record], known));
  }

  /**
   * The links a write under the lock will show, fetched before the lock is taken
   * (users come from the gateway: no lock is held across that call): those of the
   * case as it is and those the body sets (found by its check: `checked`).
   */
  /** The case as a write reads it before the lock (with its timeline, which the write extends), and the links its event shows. */
  private async readForWrite(
    who: Who,
    id: string,
    body: { client_id?: string | null; responsible_id?: string | null } = {},
    checked?: Links,
  ): Promise<{ read: CaseRecord; links: Links }> {
    const read = await this.deps.cases.get(who.teamId, id, ['timeline']);
    return {
      read,
      links: await this.links.of(
        who.teamId,
        [read, { client_id: body.client_id ?? null, responsible_id: body.responsible_id ?? null }],
        checked,
      ),
    };
  }

  /** The detail shape from links fetched before the lock; a responsible changed in between is a retry. */
  private detailWith(record: CaseRecord, links: Links) {
    if (record.responsible_id && !links.users.has(record.responsible_id))
      throw serviceUnavailable('The case changed during the update; retry');
    return detailShape(record, links);
  }

  private checkPhase(who: Who, phase: string) {
    if (!who.settings.case_phases.includes(phase)) throw invalidPhase();
  }

  /** Any number is accepted (its format is the team's own), unless the team refuses CNJ numbers that do not check. */
  private checkNumber(who: Who, number: string | null | undefined) {
    if (!number || who.settings.cnj_check !== 'reject') return;
    const info = numberInfo(number);
    if (info.format === 'cnj' && !info.valid) throw invalidCnjNumber();
  }

  async create(who: Who, body: CreateCaseBody) {
    return createdShape((await this.make(who, body, null)).record);
  }

  /** A new case, and the links its check found; `originDealId`: the deal whose won with create_case asks for it (createForDeal). */
  private async make(
    who: Who,
    body: CreateCaseBody,
    originDealId: string | null,
  ): Promise<{ record: CaseRecord; checked: Links }> {
    const phase = body.phase ?? who.settings.case_phases[0];
    this.checkPhase(who, phase);
    this.checkNumber(who, body.number);
    const checked = await this.links.check(who, body);
    const now = new Date();
    const base = {
      _id: newId('case'),
      team_id: who.teamId,
      ...fields.initial(WRITABLE_FIELDS, body),
      phase,
      priority: body.priority ?? 'media',
      status: 'ativo' as const,
      activities_count: 0,
      counted_events: [],
      documents_count: 0,
      archived_at: null,
      origin_deal_id: originDealId,
      created_at: now,
      updated_at: now,
      version: 1,
    };
    const record: CaseRecord = {
      ...base,
      ...derivedFields(base),
      ...slaSignals(base, who.settings.timezone, now),
      timeline: withEntries(null, timelineEntry(who, 'case_created', 'Case created', now)),
    };
    const event = newEvent('case.created', who.teamId, await this.detailOf(record, checked), null, who.userId);
    await this.deps.cases.insert(record, [event]);
    return { record, checked };
  }

  /** The team sync of cases (shared/src/jobs/team-syncs.ts): each ativo case's SLA signals computed again in the team's time zone (rearmed). */
  syncWork(): Record<'time-zone', TeamSyncWork<CaseRecord>> {
    return {
      'time-zone': timeZoneSync(this.deps.cases, { status: 'ativo' }, (r, timezone, now) =>
        rearmed(
          { sla_warning_at: r.sla_warning_at, sla_overdue_at: r.sla_overdue_at },
          slaSignals(r, timezone, now),
          now,
        ),
      ),
    };
  }

  async get(who: Who, id: string) {
    return this.detailOf(await this.deps.cases.get(who.teamId, id));
  }

  async list(who: Who, q: CaseListQuery) {
    const { status, priority, area, client_id, responsible_id, phase, search } = q;
    if (phase) this.checkPhase(who, phase);
    const filter: CaseFilter = { status, priority, area, client_id, responsible_id, phase, search };
    const created = zonedDays(q.from, q.to, who.settings.timezone);
    if (created) filter.created = created;
    const { records, total } = await this.deps.cases.list(who.teamId, filter, q);
    const links = await this.links.of(who.teamId, records);
    return { items: records.map((r) => listItemShape(r, links)), total };
  }

  async update(who: Who, id: string, body: UpdateCaseBody) {
    if (Object.keys(body).length === 0) throw noFieldsToUpdate();
    if (body.phase !== undefined) this.checkPhase(who, body.phase);
    this.checkNumber(who, body.number);
    const checked = await this.links.check(who, body);
    const { read, links } = await this.readForWrite(who, id, body, checked);
    return this.deps.cases.updateRead(
      read,
      async (current) => {
        const now = new Date();
        const { next, sent } = fields.apply(current, body, [...WRITABLE_FIELDS, 'status']);
        if (next.status !== current.status) next.archived_at = next.status === 'arquivado' ? now : null;

        const { changed, previous } = fields.diff([...WRITABLE_FIELDS, 'status', 'archived_at'], current, next);
        if (changed.length === 0)
          return { result: { id, ...sent, title: current.title, updated_at: iso(current.updated_at) } };

        next.updated_at = now;
        Object.assign(next, derivedFields(next));
        if (changed.includes('status') || changed.includes('sla_date'))
          Object.assign(next, slaSignals(next, who.settings.timezone, now));
        const detail = this.detailWith(next, links);

        const entries: TimelineEntry[] = [];
        const events: DomainEvent[] = [];
        const otherFields = changed.filter((f) => !['phase', 'status', 'archived_at'].includes(f));
        const archiving = next.status === 'arquivado' && current.status === 'ativo';
        if (changed.includes('phase'))
          entries.push(timelineEntry(who, 'phase_change', `Phase changed from ${current.phase} to ${next.phase}`, now));
        if (changed.includes('status'))
          entries.push(
            timelineEntry(who, 'status_change', `Status changed from ${current.status} to ${next.status}`, now),
          );
        if (otherFields.length)
          entries.push(timelineEntry(who, 'case_updated', `Updated ${otherFields.join(', ')}`, now));
        if (otherFields.length || changed.includes('phase') || (changed.includes('status') && !archiving)) {
          events.push(newEvent('case.updated', who.teamId, detail, previous, who.userId));
        }
        if (changed.includes('phase'))
          events.push(newEvent('case.phase_changed', who.teamId, detail, { phase: current.phase }, who.userId));
        if (archiving)
          events.push(
            newEvent('case.archived', who.teamId, detail, { status: current.status, archived_at: null }, who.userId),
          );

        const set: Partial<CaseRecord> = {
          updated_at: now,
          ...derivedFields(next),
          sla_warning_at: next.sla_warning_at,
          sla_overdue_at: next.sla_overdue_at,
          timeline: withEntries(current.timeline, ...entries),
        };
        for (const f of changed) Object.assign(set, { [f]: next[f] });
        return { result: { id, ...sent, title: next.title, updated_at: iso(now) }, write: { set, events } };
      },
      ['timeline'],
    );
  }

  async archive(who: Who, id: string) {
    const { read, links } = await this.readForWrite(who, id);
    return this.deps.cases.updateRead(
      read,
      async (current) => {
        const archived = exact<CaseArchived>();
        if (current.status === 'arquivado')
          return { result: archived({ id, status: 'arquivado', archived_at: iso(current.archived_at) }) };
        const now = new Date();
        const set = {
          status: 'arquivado' as const,
          archived_at: now,
          updated_at: now,
          sla_warning_at: null,
          sla_overdue_at: null,
        };
        const event = newEvent(
          'case.archived',
          who.teamId,
          this.detailWith({ ...current, ...set }, links),
          { status: 'ativo', archived_at: null },
          who.userId,
        );
        const entry = timelineEntry(who, 'status_change', 'Status changed from ativo to arquivado', now);
        return {
          result: archived({ id, status: 'arquivado', archived_at: iso(now) }),
          write: { set: { ...set, timeline: withEntries(current.timeline, entry) }, events: [event] },
        };
      },
      ['timeline'],
    );
  }

  async timeline(who: Who, id: string, limit: number) {
    return timelineOf(await this.deps.cases.get(who.teamId, id, ['timeline']), limit, this.deps.users);
  }

  async activities(who: Who, id: string, q: ListQuery) {
    await this.deps.cases.get(who.teamId, id);
    return this.deps.activities.listForCase(who, id, q);
  }

  // Questions other services ask (internal endpoints).

  /**
   * The case of a deal won with create_case, made once per deal: it carries its deal
   * under a unique key (origin_key), so an attempt however late, or concurrent
   * attempts, find the one case. The first attempt is the common one, so the case
   * is stored first and looked up only when that fails. `created`: this call made it;
   * `client`: the case's client as its check found it just now (the deal's event shows
   * it), null when this call made no check of it.
   */
  async createForDeal(
    who: Who,
    dealId: string,
    body: CreateCaseBody,
  ): Promise<{ created: boolean; case: ReturnType<typeof createdShape>; client: ClientFacts | null }> {
    try {
      const { record, checked } = await this.make(who, body, dealId);
      const client = record.client_id ? checked.clients.get(record.client_id) : undefined;
      return { created: true, case: createdShape(record), client: client ? factsOfView(client) : null };
    } catch (e) {
      // An earlier or concurrent attempt stored it first (the unique key refused this one), or a link it checks is gone since.
      const stored = await this.deps.cases.byOriginDeal(who.teamId, dealId);
      if (stored) return { created: false, case: createdShape(stored), client: null };
      throw e;
    }
  }

  /** A deal lost or archived before its won with create_case completed: the case made for it, if any, is archived. Its id, or null. */
  async archiveForDeal(who: Who, dealId: string): Promise<string | null> {
    const made = await this.deps.cases.byOriginDeal(who.teamId, dealId);
    if (!made) return null;
    await this.archive(who, made._id);
    return made._id;
  }

  /** What the activities service shows of a case. */
  async facts(teamId: string, id: string) {
    const r = await this.deps.cases.get(teamId, id);
    return { id: r._id, title: r.title, number: r.number, status: r.status, updated_at: iso(r.updated_at) };
  }

  /** An activity event's news for its case (CaseActivityCounts). */
  recordActivityEvent(event: ActivityEventNews): Promise<void> {
    return this.counts.record(event);
  }

  countByClient(teamId: string, clientIds: string[]): Promise<Record<string, number>> {
    return this.deps.cases.countByClient(teamId, clientIds);
  }

  hasActiveCases(teamId: string, clientId: string): Promise<boolean> {
    return this.deps.cases.hasActiveCases(teamId, clientId);
  }

  async listForClient(teamId: string, clientId: string, q: ListQuery) {
    const { records, total } = await this.deps.cases.listForClient(teamId, clientId, q);
    return { items: records.map(clientCaseShape), total };
  }

  /** Every team's cases after `after` (by id), for the publications service's first fill of its view of case numbers. */
  async numbersAfter(after: string | null, limit: number) {
    const records = await this.deps.cases.numbersAfter(after, limit);
    return records.map((r) => ({ id: r._id, team_id: r.team_id, number: r.number, updated_at: iso(r.updated_at) }));
  }

  phasesInUse(teamId: string, phases: string[]): Promise<string[]> {
    return this.deps.cases.phasesInUse(teamId, phases);
  }
}
