// Case use cases. Every write stores the record, its timeline entries and its
// events in one document write (the outbox), then nudges the relay.
import type { Collection } from 'mongodb';
import type { Identity } from '@lpm/shared/identity';
import { newId, isId } from '@lpm/shared/ids';
import { newEvent, type DomainEvent } from '@lpm/shared/events';
import { outboxOnInsert, outboxUpdate } from '@lpm/shared/outbox/fields';
import { withDocumentLock } from '@lpm/shared/store/lock';
import { collectionOf, type Orm } from '@lpm/shared/store/orm';
import { isDuplicateKey } from '@lpm/shared/store/duplicate-key';
import { badRequest, duplicate, invalidField, notFound, serviceUnavailable } from '@lpm/shared/errors';
import { pageWindow, parseSort, type ListQuery } from '@lpm/shared/http/pagination';
import { escapeRegex, foldText } from '@lpm/shared/text';
import { armDeadline } from '@lpm/shared/jobs/time-signals';
import { zonedMoment } from '@lpm/shared/time';
import type { DirectoryUser } from '@lpm/shared/upstream/user-directory';
import type { CasePriority, CaseRecord, CaseStatus, TimelineEntry } from '../data/case-entity.ts';
import type { ClientLinks } from './client-links.ts';
import { WRITABLE_FIELDS, clientCaseShape, createdShape, derivedFields, detailShape, listItemShape, type Links } from './case-shape.ts';

export interface UserLookup {
  find(teamId: string, ids: string[]): Promise<Map<string, DirectoryUser>>;
}

/** The activities of a case, which the activities service owns. */
export interface CaseActivities {
  list(who: Who, caseId: string, q: ListQuery): Promise<{ items: unknown[]; total: number }>;
}

export interface CasesDeps {
  orm: Orm;
  clientLinks: ClientLinks;
  users: UserLookup;
  activities: CaseActivities;
  relay: { kick(collection: string, id: string): void };
}

export interface CaseListQuery extends ListQuery {
  status?: CaseStatus;
  phase?: string;
  priority?: CasePriority;
  area?: string;
  client_id?: string;
  responsible_id?: string;
  from?: string;
  to?: string;
  search?: string;
}

type Body = Record<string, unknown>;
export type Who = Pick<Identity, 'teamId' | 'userId' | 'settings'>;

const TIMELINE_KEPT = 100;
const SORT_KEYS: Record<string, string[]> = {
  created_at: ['created_at'],
  updated_at: ['updated_at'],
  title: ['title_sort'],
  priority: ['priority_rank'],
  // Cases without an SLA date come last in either direction.
  sla_date: ['sla_missing', 'sla_date'],
};

export const caseNotFound = () => notFound('Case not found');
const userNotFound = () => notFound('User not found');
const duplicateNumber = () => duplicate('Duplicate case number', 'duplicate_case_number', { field: 'number' });

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

/** A field's value as clients read it, so comparisons and previous_attributes use one form. */
function readValue(field: string, value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  return value ?? (field === 'labels' ? [] : field === 'metadata' ? {} : null);
}

function normalize(field: string, value: unknown): unknown {
  if (value === null) return field === 'labels' ? [] : field === 'metadata' ? {} : null;
  if (field === 'title') {
    const title = String(value).trim();
    if (!title) throw invalidField('title', 'title must not be empty');
    return title;
  }
  if (field === 'number') return String(value).trim() || null;
  return value;
}

/** The instants of the SLA signals: the end of `sla_date` in the team's zone, for ativo cases only. */
function slaSignals(r: Pick<CaseRecord, 'status' | 'sla_date'>, timeZone: string, now = new Date()) {
  const deadline = r.status === 'ativo' && r.sla_date ? zonedMoment(r.sla_date, timeZone) : null;
  const { warnAt, overdueAt } = armDeadline(deadline, now);
  return { sla_warning_at: warnAt, sla_overdue_at: overdueAt };
}

function nextDay(date: string): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString().slice(0, 10);
}

export class Cases {
  private readonly deps: CasesDeps;

  constructor(deps: CasesDeps) {
    this.deps = deps;
  }

  private get collection(): Collection<CaseRecord> {
    return collectionOf<CaseRecord>(this.deps.orm, 'cases');
  }

  private async load(teamId: string, id: string, withTimeline = false): Promise<CaseRecord> {
    if (!isId('case', id)) throw caseNotFound();
    const projection = withTimeline ? { outbox: 0 } : { outbox: 0, timeline: 0 };
    const found = await this.collection.findOne({ _id: id, team_id: teamId }, { projection });
    if (!found) throw caseNotFound();
    return found as CaseRecord;
  }

  private async links(teamId: string, records: CaseRecord[]): Promise<Links> {
    const userIds = [...new Set(records.map((r) => r.responsible_id).filter((id): id is string => !!id))];
    const [clients, users] = await Promise.all([
      this.deps.clientLinks.find(teamId, records.map((r) => r.client_id)),
      userIds.length ? this.deps.users.find(teamId, userIds) : new Map<string, DirectoryUser>(),
    ]);
    return { clients, users };
  }

  /** The detail read shape, as events carry it. */
  async detailOf(record: CaseRecord) {
    return detailShape(record, await this.links(record.team_id, [record]));
  }

  private checkPhase(who: Who, phase: unknown) {
    if (!who.settings.case_phases.includes(phase as string)) throw invalidField('phase', 'Invalid phase');
  }

  /** Checks the links a write sets (404 with the spec's message when one is not the team's). */
  private async checkLinks(who: Who, body: Body) {
    const checks: Promise<unknown>[] = [];
    if (typeof body.client_id === 'string') checks.push(this.deps.clientLinks.require(who, body.client_id));
    if (typeof body.responsible_id === 'string') {
      const id = body.responsible_id;
      if (!isId('user', id)) throw userNotFound();
      checks.push(
        this.deps.users.find(who.teamId, [id]).then((found) => {
          if (!found.has(id)) throw userNotFound();
        }),
      );
    }
    await Promise.all(checks);
  }

  async create(who: Who, body: Body) {
    const phase = body.phase ?? who.settings.case_phases[0];
    this.checkPhase(who, phase);
    await this.checkLinks(who, body);
    const now = new Date();
    const record = { _id: newId('case'), team_id: who.teamId } as CaseRecord;
    for (const f of WRITABLE_FIELDS) (record as unknown as Body)[f] = f in body ? normalize(f, body[f]) : readValue(f, undefined);
    Object.assign(record, {
      phase,
      priority: body.priority ?? 'media',
      status: 'ativo',
      activities_count: 0,
      documents_count: 0,
      archived_at: null,
      created_at: now,
      updated_at: now,
      version: 1,
    });
    Object.assign(record, derivedFields(record), slaSignals(record, who.settings.timezone, now));
    record.timeline = [this.entry(who, 'case_created', 'Case created', now)];
    const event = newEvent('case.created', who.teamId, await this.detailOf(record), null, who.userId);
    try {
      await this.collection.insertOne({ ...record, ...outboxOnInsert([event]) });
    } catch (e) {
      if (isDuplicateKey(e)) throw duplicateNumber();
      throw e;
    }
    this.deps.relay.kick('cases', record._id);
    return createdShape(record);
  }

  async get(who: Who, id: string) {
    return this.detailOf(await this.load(who.teamId, id));
  }

  async list(who: Who, q: CaseListQuery) {
    const filter: Body = { team_id: who.teamId };
    for (const f of ['status', 'priority', 'area', 'client_id', 'responsible_id'] as const) if (q[f]) filter[f] = q[f];
    if (q.phase) {
      this.checkPhase(who, q.phase);
      filter.phase = q.phase;
    }
    if (q.from || q.to) {
      const tz = who.settings.timezone;
      filter.created_at = {
        ...(q.from ? { $gte: zonedMoment(q.from, tz, '00:00:00') } : {}),
        ...(q.to ? { $lt: zonedMoment(nextDay(q.to), tz, '00:00:00') } : {}),
      };
    }
    const search = q.search?.trim();
    if (search) filter.search_text = new RegExp(escapeRegex(foldText(search)));
    const sort = parseSort(q.sort, '-created_at');
    const keys = SORT_KEYS[sort.field];
    const orderBy: Record<string, 1 | -1> = {};
    keys.forEach((k, i) => (orderBy[k] = i < keys.length - 1 ? 1 : sort.direction));
    orderBy._id = sort.direction;
    const { skip, limit } = pageWindow(q);
    const [rows, total] = await Promise.all([
      this.collection.find(filter, { projection: { outbox: 0, timeline: 0 }, sort: orderBy, skip, limit }).toArray(),
      this.collection.countDocuments(filter),
    ]);
    const records = rows as CaseRecord[];
    const links = await this.links(who.teamId, records);
    return { items: records.map((r) => listItemShape(r, links)), total };
  }

  async update(who: Who, id: string, body: Body) {
    if (Object.keys(body).length === 0) throw badRequest('No fields to update');
    if ('phase' in body) this.checkPhase(who, body.phase);
    await this.checkLinks(who, body);
    return this.locked(id, async () => {
      const current = await this.load(who.teamId, id, true);
      const now = new Date();
      const next: CaseRecord = { ...current };
      const sent: Body = {};
      for (const [f, v] of Object.entries(body)) {
        (next as unknown as Body)[f] = normalize(f, v);
        sent[f] = readValue(f, (next as unknown as Body)[f]);
      }
      if (next.status !== current.status) next.archived_at = next.status === 'arquivado' ? now : null;

      const changed = [...WRITABLE_FIELDS, 'status', 'archived_at'].filter(
        (f) => JSON.stringify(readValue(f, (current as unknown as Body)[f])) !== JSON.stringify(readValue(f, (next as unknown as Body)[f])),
      );
      if (changed.length === 0) return { id, ...sent, title: current.title, updated_at: iso(current.updated_at) };

      next.updated_at = now;
      next.version = current.version + 1;
      Object.assign(next, derivedFields(next));
      if (changed.includes('status') || changed.includes('sla_date')) Object.assign(next, slaSignals(next, who.settings.timezone, now));
      const previous = Object.fromEntries(changed.map((f) => [f, readValue(f, (current as unknown as Body)[f])]));
      const detail = await this.detailOf(next);

      const entries: TimelineEntry[] = [];
      const events: DomainEvent[] = [];
      const otherFields = changed.filter((f) => !['phase', 'status', 'archived_at'].includes(f));
      const archiving = next.status === 'arquivado' && current.status === 'ativo';
      if (changed.includes('phase')) {
        entries.push(this.entry(who, 'phase_change', `Phase changed from ${current.phase} to ${next.phase}`, now));
      }
      if (changed.includes('status')) {
        entries.push(this.entry(who, 'status_change', `Status changed from ${current.status} to ${next.status}`, now));
      }
      if (otherFields.length) entries.push(this.entry(who, 'case_updated', `Updated ${otherFields.join(', ')}`, now));
      if (otherFields.length || changed.includes('phase') || (changed.includes('status') && !archiving)) {
        events.push(newEvent('case.updated', who.teamId, detail, previous, who.userId));
      }
      if (changed.includes('phase')) events.push(newEvent('case.phase_changed', who.teamId, detail, { phase: current.phase }, who.userId));
      if (archiving) {
        events.push(newEvent('case.archived', who.teamId, detail, { status: current.status, archived_at: null }, who.userId));
      }

      const set: Body = {
        updated_at: now,
        version: next.version,
        ...derivedFields(next),
        sla_warning_at: next.sla_warning_at,
        sla_overdue_at: next.sla_overdue_at,
        timeline: [...(current.timeline ?? []), ...entries].slice(-TIMELINE_KEPT),
      };
      for (const f of changed) set[f] = (next as unknown as Body)[f];
      await this.write(current, set, events);
      return { id, ...sent, title: next.title, updated_at: iso(now) };
    });
  }

  async archive(who: Who, id: string) {
    return this.locked(id, async () => {
      const current = await this.load(who.teamId, id, true);
      if (current.status === 'arquivado') return { id, status: 'arquivado', archived_at: iso(current.archived_at) };
      const now = new Date();
      const next: CaseRecord = { ...current, status: 'arquivado', archived_at: now, updated_at: now, version: current.version + 1 };
      const event = newEvent('case.archived', who.teamId, await this.detailOf(next), { status: 'ativo', archived_at: null }, who.userId);
      const entry = this.entry(who, 'status_change', 'Status changed from ativo to arquivado', now);
      await this.write(
        current,
        {
          status: 'arquivado',
          archived_at: now,
          updated_at: now,
          version: next.version,
          sla_warning_at: null,
          sla_overdue_at: null,
          timeline: [...(current.timeline ?? []), entry].slice(-TIMELINE_KEPT),
        },
        [event],
      );
      return { id, status: 'arquivado', archived_at: iso(now) };
    });
  }

  async timeline(who: Who, id: string, limit: number) {
    const record = await this.load(who.teamId, id, true);
    const entries = [...(record.timeline ?? [])].reverse().slice(0, limit);
    const userIds = [...new Set(entries.map((e) => e.user_id).filter((u): u is string => !!u))];
    const users = userIds.length ? await this.deps.users.find(who.teamId, userIds) : new Map<string, DirectoryUser>();
    return entries.map((e) => ({
      id: e.id,
      type: e.type,
      description: e.description,
      user: e.user_id ? { id: e.user_id, name: users.get(e.user_id)?.name ?? null } : null,
      created_at: iso(e.created_at),
    }));
  }

  async activities(who: Who, id: string, q: ListQuery) {
    await this.load(who.teamId, id);
    return this.deps.activities.list(who, id, q);
  }

  // Questions other services ask (internal endpoints).

  async countByClient(teamId: string, clientIds: string[]): Promise<Record<string, number>> {
    const counts = Object.fromEntries(clientIds.map((id) => [id, 0]));
    if (clientIds.length === 0) return counts;
    const rows = await this.collection
      .aggregate<{ _id: string; n: number }>([
        { $match: { team_id: teamId, client_id: { $in: clientIds } } },
        { $group: { _id: '$client_id', n: { $sum: 1 } } },
      ])
      .toArray();
    for (const r of rows) counts[r._id] = r.n;
    return counts;
  }

  async hasActiveCases(teamId: string, clientId: string): Promise<boolean> {
    return (await this.collection.findOne({ team_id: teamId, client_id: clientId, status: 'ativo' }, { projection: { _id: 1 } })) !== null;
  }

  async listForClient(teamId: string, clientId: string, q: ListQuery) {
    const filter = { team_id: teamId, client_id: clientId };
    const sort = parseSort(q.sort, '-created_at');
    const orderBy: Record<string, 1 | -1> = {};
    SORT_KEYS[sort.field].forEach((k, i, keys) => (orderBy[k] = i < keys.length - 1 ? 1 : sort.direction));
    orderBy._id = sort.direction;
    const { skip, limit } = pageWindow(q);
    const [rows, total] = await Promise.all([
      this.collection.find(filter, { projection: { outbox: 0, timeline: 0 }, sort: orderBy, skip, limit }).toArray(),
      this.collection.countDocuments(filter),
    ]);
    return { items: (rows as CaseRecord[]).map(clientCaseShape), total };
  }

  async phasesInUse(teamId: string, phases: string[]): Promise<string[]> {
    if (phases.length === 0) return [];
    return (await this.collection.distinct('phase', { team_id: teamId, phase: { $in: phases } })) as string[];
  }

  private entry(who: Who, type: TimelineEntry['type'], description: string, at: Date): TimelineEntry {
    return { id: newId('evt'), type, description, user_id: who.userId, created_at: at };
  }

  /**
   * Read-modify-write of one case runs under a document lock shared with the
   * outbox relay and the SLA signals: FerretDB applies concurrent updates of one
   * document without isolation.
   */
  private locked<T>(id: string, fn: () => Promise<T>): Promise<T> {
    if (!isId('case', id)) throw caseNotFound();
    return withDocumentLock(this.deps.orm.em.getConnection().getDb(), 'cases', id, fn);
  }

  private async write(current: CaseRecord, set: Body, events: DomainEvent[]): Promise<void> {
    try {
      const res = await this.collection.updateOne(
        { _id: current._id, team_id: current.team_id, version: current.version },
        outboxUpdate({ $set: set }, events),
      );
      if (res.matchedCount === 0) throw serviceUnavailable('The case changed during the update; retry');
    } catch (e) {
      if (isDuplicateKey(e)) throw duplicateNumber();
      throw e;
    }
    this.deps.relay.kick('cases', current._id);
  }
}
