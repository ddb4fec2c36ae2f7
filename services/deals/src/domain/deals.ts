// Deal use cases (decisions §5 "Deals"): phases and probabilities from the team's
// pipeline, links to clients and users checked at write time, conditional state
// moves (won, lost, archive) under the record's lock, the case of a won deal made
// by the cases service before the deal is marked won, the summary, and
// ai_insights from the team's own history. Every write stores the record and its
// events in one document write (data/deals-repository.ts).
import { FieldChanges, trimmedText, type SentFields } from '@lpm/shared/changes';
import { AppError, badRequest, serviceUnavailable } from '@lpm/shared/errors';
import { newEvent } from '@lpm/shared/events';
import { exact } from '@lpm/shared/http/schemas';
import { fromCents } from '@lpm/shared/money';
import type { ClientLinks } from '@lpm/shared/views/client-links';
import { RecordLinks, type Links, type UserLookup } from '@lpm/shared/views/record-links';
import type { Identity } from '@lpm/shared/identity';
import type { Logger } from '@lpm/shared/logger';
import type { Caller } from '@lpm/shared/upstream/service-client';
import { newId } from '@lpm/shared/ids';
import { DAY_MS, iso, nextDay, zonedMoment } from '@lpm/shared/time';
import type { CaseRequest, DealRecord } from '../data/deal-entity.ts';
import type { DealFilter, DealsRepository } from '../data/deals-repository.ts';
import type { CreateDealBody, DealDetail, DealListQuery, DealsSummary, LostBody, PhaseBody, SummaryQuery, UpdateDealBody, WonBody } from '../contract/deal-schemas.ts';
import type { DealActivities } from '../upstream/activities-service.ts';
import type { DealCases } from '../upstream/cases-service.ts';
import { dealArchived, dealClosed, invalidPhase } from '../contract/deal-errors.ts';
import { WRITABLE_FIELDS, addStint, apiNames, part, createdShape, derivedFields, detailShape, listItemShape, toCents } from './deal-shape.ts';
import { insightsOf } from './insights.ts';

export interface DealsDeps {
  deals: DealsRepository;
  clientLinks: ClientLinks;
  users: UserLookup;
  cases: DealCases;
  activities: DealActivities;
  logger?: Logger;
}

type LinkFields = { client_id?: string | null; responsible_id?: string | null };

const fields = new FieldChanges<DealRecord>({
  empty: { labels: [], metadata: {} },
  normalize: {
    title: trimmedText('title'),
    currency: (c) => c.toUpperCase(),
  },
  read: { value_cents: (c) => fromCents(c) },
});

/** A body as the record names its fields: value in cents. */
function recordFields(body: UpdateDealBody): SentFields<DealRecord> {
  const { value, ...rest } = body;
  return 'value' in body ? { ...rest, value_cents: value === null || value === undefined ? null : toCents('value', value) } : rest;
}

/** Lost, or archived without having been won: a deal whose case, if one was made for it, has no won deal behind it. */
const closedUnwon = (r: DealRecord) => r.status === 'perdido' || (r.status === 'arquivado' && r.won_at === null);

/** Deals owing their case an archive, settled per run of the case archive repair. */
const OWED_BATCH = 100;

/**
 * How long after a close with no case found yet the debt is kept: a won attempt
 * under way may still make the case (its cases call waits 10 s; the cases service
 * may finish it later still).
 */
const CASE_ARCHIVE_SETTLE_MS = 5 * 60_000;

/** The fields of a close that owe the deal's case an archive (case_archive_pending). */
const owesCaseArchive = (who: Identity) => ({ case_archive_pending: 1, case_archive_by: who.userId });

/** won, lost and phase moves need an open deal. */
function requireOpen(r: DealRecord): void {
  if (r.status === 'arquivado') throw dealArchived();
  if (r.status !== 'ativo') throw dealClosed();
}

/** The fields of a move to `phase` at `now`: the time in the phase left is added to its stints. */
function moveTo(current: DealRecord, phase: string, now: Date) {
  return {
    phase,
    previous_phase: current.phase,
    phase_changed_at: now,
    phase_entered_at: now,
    phase_stints: addStint(current.phase_stints ?? [], current.phase, now.getTime() - current.phase_entered_at.getTime()),
  };
}

const round = (n: number, decimals: number) => Number(n.toFixed(decimals));
const money = (cents: number) => cents / 100;

export class Deals {
  private readonly deps: DealsDeps;
  private readonly links: RecordLinks;

  constructor(deps: DealsDeps) {
    this.deps = deps;
    this.links = new RecordLinks(deps.clientLinks, deps.users);
  }

  /** The links a write under the lock will show, fetched before the lock (no network wait under it). */
  private async linksBefore(who: Identity, id: string, body: LinkFields = {}): Promise<Links> {
    const before = await this.deps.deals.get(who.teamId, id);
    return this.links.of(who.teamId, [before, body]);
  }

  /** The event's detail shape from links fetched before the lock; a responsible changed in between is a retry. */
  private detailWith(record: DealRecord, links: Links) {
    if (record.responsible_id && !links.users.has(record.responsible_id)) throw serviceUnavailable('The deal changed during the update; retry');
    return detailShape(record, links);
  }

  private phaseProbability(who: Identity, phase: string): number | undefined {
    return who.settings.deal_phases.find((p) => p.name === phase)?.probability;
  }

  private checkPhase(who: Identity, phase: string): number {
    const probability = this.phaseProbability(who, phase);
    if (probability === undefined) throw invalidPhase();
    return probability;
  }

  async create(who: Identity, body: CreateDealBody) {
    const phase = body.phase ?? who.settings.deal_phases[0]?.name;
    const phaseProbability = this.checkPhase(who, phase);
    const sent = recordFields(body);
    await this.links.check(who, body);
    const now = new Date();
    const base = {
      _id: newId('deal'),
      team_id: who.teamId,
      ...fields.initial(WRITABLE_FIELDS, sent),
      currency: (body.currency ?? 'BRL').toUpperCase(),
      phase,
      probability: body.probability ?? phaseProbability,
      status: 'ativo' as const,
      final_value_cents: null,
      won_at: null,
      loss_reason: null,
      competitor: null,
      lost_at: null,
      close_notes: null,
      phase_notes: null,
      archived_at: null,
      previous_phase: null,
      phase_changed_at: null,
      phase_entered_at: now,
      phase_stints: [],
      case_request: null,
      case_created: null,
      case_archive_pending: 0,
      case_archive_by: null,
      created_at: now,
      updated_at: now,
      version: 1,
    };
    const record: DealRecord = { ...base, ...derivedFields(base) };
    const detail = detailShape(record, await this.links.of(who.teamId, [record]));
    await this.deps.deals.insert(record, [newEvent('deal.created', who.teamId, detail, null, who.userId)]);
    return createdShape(record);
  }

  /** What other services check of a deal at write time (the internal read): that it is the team's. */
  async facts(teamId: string, id: string) {
    const r = await this.deps.deals.get(teamId, id);
    return { id: r._id, title: r.title, status: r.status, updated_at: r.updated_at.toISOString() };
  }

  async get(who: Identity, id: string): Promise<DealDetail> {
    const record = await this.deps.deals.get(who.teamId, id);
    const [links, segments, wonStints, activities] = await Promise.all([
      this.links.of(who.teamId, [record]),
      this.deps.deals.closedBySegment(who.teamId),
      this.deps.deals.wonStints(who.teamId),
      this.deps.activities.countsFor(who, record._id),
    ]);
    const phaseProbability = this.phaseProbability(who, record.phase) ?? record.probability;
    const ai_insights = insightsOf(record, phaseProbability, { segments, wonStints }, who.settings.timezone, new Date(), activities);
    return exact<DealDetail>()({ ...detailShape(record, links), activities_count: activities.count, ai_insights });
  }

  async list(who: Identity, q: DealListQuery) {
    const { status, phase, client_id, responsible_id, source } = q;
    if (phase) this.checkPhase(who, phase);
    const filter: DealFilter = { status, phase, client_id, responsible_id, source };
    if (q.min_value !== undefined || q.max_value !== undefined) {
      // Bounds to the cent: a bound between two cents includes what it should (10.005 <= value means value >= 10.01).
      filter.value = {
        min: q.min_value === undefined ? undefined : Math.ceil(Math.round(q.min_value * 1e6) / 1e4),
        max: q.max_value === undefined ? undefined : Math.floor(Math.round(q.max_value * 1e6) / 1e4),
      };
    }
    if (q.from || q.to) {
      const tz = who.settings.timezone;
      filter.created = {
        from: q.from ? zonedMoment(q.from, tz, '00:00:00') : undefined,
        before: q.to ? zonedMoment(nextDay(q.to), tz, '00:00:00') : undefined,
      };
    }
    const { records, total } = await this.deps.deals.list(who.teamId, filter, q);
    const links = await this.links.of(who.teamId, records);
    return { items: records.map((r) => listItemShape(r, links)), total };
  }

  async update(who: Identity, id: string, body: UpdateDealBody) {
    if (Object.keys(body).length === 0) throw badRequest('No fields to update');
    if (body.phase !== undefined) this.checkPhase(who, body.phase);
    const sentFields = recordFields(body);
    await this.links.check(who, body);
    const links = await this.linksBefore(who, id, body);
    return this.deps.deals.update(who.teamId, id, async (current) => {
      const { next, sent } = fields.apply(current, sentFields, WRITABLE_FIELDS);
      const now = new Date();
      const moved = next.phase !== current.phase;
      if (moved) {
        requireOpen(current);
        Object.assign(next, moveTo(current, next.phase, now));
      }
      const { changed, previous } = fields.diff([...WRITABLE_FIELDS, 'previous_phase', 'phase_changed_at'], current, next);
      if (changed.length === 0) return { result: { id, ...apiNames(sent), updated_at: iso(current.updated_at) } };

      next.updated_at = now;
      Object.assign(next, derivedFields(next));
      const detail = this.detailWith(next, links);
      const events = [newEvent('deal.updated', who.teamId, detail, apiNames(previous), who.userId)];
      if (moved) events.push(this.phaseChanged(who, current, detail));
      const set: Partial<DealRecord> = { updated_at: now, ...derivedFields(next) };
      for (const f of changed) Object.assign(set, { [f]: next[f] });
      if (moved) Object.assign(set, { phase_entered_at: next.phase_entered_at, phase_stints: next.phase_stints });
      const phaseFields = moved ? { previous_phase: next.previous_phase, phase_changed_at: iso(now) } : {};
      return { result: { id, ...apiNames(sent), ...phaseFields, updated_at: iso(now) }, write: { set, events } };
    });
  }

  async movePhase(who: Identity, id: string, body: PhaseBody) {
    this.checkPhase(who, body.phase);
    const links = await this.linksBefore(who, id);
    return this.deps.deals.update(who.teamId, id, async (current) => {
      requireOpen(current);
      if (current.phase === body.phase) {
        return {
          result: { id, phase: current.phase, previous_phase: current.previous_phase, phase_changed_at: iso(current.phase_changed_at), updated_at: iso(current.updated_at) },
        };
      }
      const now = new Date();
      const move = moveTo(current, body.phase, now);
      const next: DealRecord = { ...current, ...move, phase_notes: body.notes ?? null, updated_at: now };
      const set = { ...move, phase_notes: next.phase_notes, updated_at: now, ...derivedFields(next) };
      const detail = this.detailWith(next, links);
      const previous = { phase: current.phase, previous_phase: current.previous_phase, phase_changed_at: iso(current.phase_changed_at) };
      const events = [newEvent('deal.updated', who.teamId, detail, previous, who.userId), this.phaseChanged(who, current, detail)];
      return {
        result: { id, phase: body.phase, previous_phase: current.phase, phase_changed_at: iso(now), updated_at: iso(now) },
        write: { set, events },
      };
    });
  }

  private phaseChanged(who: Identity, current: DealRecord, detail: ReturnType<typeof detailShape>) {
    return newEvent('deal.phase_changed', who.teamId, detail, { phase: current.phase, phase_changed_at: iso(current.phase_changed_at) }, who.userId);
  }

  /**
   * Marks the deal won. With create_case the case is made first, by the cases
   * service, which keeps one case per deal (the case carries its deal under a unique
   * key): the request is fixed on the deal by the first attempt, every retry asks
   * for it again and gets that case back, and the deal is marked won only once the
   * case exists. Under the lock the status is checked again: of concurrent attempts
   * one wins and the others get 422. A retry without create_case still gets the
   * case the request fixed on the deal. An attempt that finds the deal lost or
   * archived once its case exists archives the case (see closedBeforeWon).
   */
  won(who: Identity, id: string, body: WonBody) {
    return this.closing(who, id, () => this.markWon(who, id, body));
  }

  lost(who: Identity, id: string, body: LostBody) {
    return this.closing(who, id, () => this.markLost(who, id, body));
  }

  /**
   * A close that failed for want of the lock or of a stable record (503) is
   * answered as the deal now stands: 422 when another request closed it meanwhile
   * (20 concurrent closes wait for one lock; the 19 that lose learn it here even
   * when the store is too slow to hand each of them the lock in time).
   */
  private async closing<T>(who: Identity, id: string, close: () => Promise<T>): Promise<T> {
    try {
      return await close();
    } catch (e) {
      if (e instanceof AppError && e.status === 503) requireOpen(await this.deps.deals.get(who.teamId, id));
      throw e;
    }
  }

  private async markWon(who: Identity, id: string, body: WonBody) {
    const finalSent = body.final_value === undefined || body.final_value === null ? undefined : toCents('final_value', body.final_value);
    const before = await this.deps.deals.get(who.teamId, id);
    const links = await this.links.of(who.teamId, [before, {}]);
    let caseCreated: { id: string; title: string } | null = null;
    // A deal whose won with create_case began is won with that case, whatever a retry sends.
    if (body.create_case || before.case_request) {
      const request = await this.deps.deals.update(who.teamId, id, async (current) => {
        requireOpen(current);
        if (current.case_request) return { result: current.case_request };
        const req: CaseRequest = {
          title: body.case_data?.title?.trim() || current.title,
          area: body.case_data?.area ?? null,
          client_id: current.client_id,
          responsible_id: current.responsible_id,
        };
        return { result: req, write: { set: { case_request: req }, events: [] } };
      });
      caseCreated = await this.deps.cases.createForDeal(who, id, request);
    }
    let closedMeanwhile: DealRecord | null = null;
    const answer = await this.deps.deals.update(who.teamId, id, async (current) => {
      if (caseCreated !== null && closedUnwon(current)) {
        // The case this attempt made has no won deal behind it: owed an archive, durably (a close that found no case yet did not archive it).
        closedMeanwhile = current;
        return { result: null, write: current.case_archive_pending ? undefined : { set: owesCaseArchive(who), events: [] } };
      }
      requireOpen(current);
      const now = new Date();
      const move = {
        status: 'ganho' as const,
        final_value_cents: finalSent ?? current.value_cents,
        won_at: now,
        close_notes: body.notes ?? null,
        phase_stints: addStint(current.phase_stints ?? [], current.phase, now.getTime() - current.phase_entered_at.getTime()),
        phase_entered_at: now,
        case_created: caseCreated,
        updated_at: now,
      };
      const next: DealRecord = { ...current, ...move };
      const set = { ...move, ...derivedFields(next) };
      const previous = { status: current.status, final_value: fromCents(current.final_value_cents), won_at: null };
      const event = newEvent('deal.won', who.teamId, this.detailWith(next, links), previous, who.userId);
      const result = { id, status: 'ganho', final_value: fromCents(next.final_value_cents), won_at: iso(now), ...(caseCreated ? { case_created: caseCreated } : {}) };
      return { result, write: { set, events: [event] } };
    });
    if (closedMeanwhile) {
      // Outside the deal's lock: no network wait under it.
      await this.archiveOwedCaseNow(who, closedMeanwhile);
      requireOpen(closedMeanwhile);
    }
    return answer!;
  }

  /**
   * A deal closed otherwise (lost, archived) while a won with create_case was under
   * way owes the case made for it, if any, an archive, so no case stays open for a
   * deal that was not won. The close writes the debt (case_archive_pending) with
   * itself; this asks the cases service and clears it. The close stands whatever
   * happens here: what fails, or a process that dies first, is left to the case
   * archive repair (settleCaseArchives).
   */
  private async archiveOwedCaseNow(who: Identity, closed: Pick<DealRecord, '_id' | 'team_id' | 'lost_at' | 'archived_at'>): Promise<void> {
    try {
      await this.archiveOwedCase(who, closed);
    } catch (err) {
      this.deps.logger?.warn({ err, deal: closed._id }, 'case of a deal closed unwon not archived yet; the case archive repair archives it');
    }
  }

  /**
   * Archives the case the deal owes an archive. The debt is cleared once a case was
   * archived, or once no case turned up for CASE_ARCHIVE_SETTLE_MS after the close:
   * until then a won attempt still under way may yet make one (it then finds the
   * deal closed and writes the debt itself, unless it dies first).
   */
  private async archiveOwedCase(who: Caller, closed: Pick<DealRecord, '_id' | 'team_id' | 'lost_at' | 'archived_at'>): Promise<void> {
    const archived = await this.deps.cases.archiveForDeal(who, closed._id);
    const closedAt = (closed.lost_at ?? closed.archived_at)?.getTime() ?? 0;
    if (archived !== null || Date.now() - closedAt >= CASE_ARCHIVE_SETTLE_MS) await this.deps.deals.caseArchived(closed.team_id, closed._id);
  }

  /** The case archive repair: the archives owed by deals closed unwon whose process died, or whose cases service failed, before archiving. */
  async settleCaseArchives(): Promise<number> {
    const owing = await this.deps.deals.owedCaseArchives(OWED_BATCH);
    for (const deal of owing) {
      try {
        await this.archiveOwedCase({ teamId: deal.team_id, userId: deal.case_archive_by ?? undefined }, deal);
      } catch (err) {
        this.deps.logger?.warn({ err, deal: deal._id }, 'case of a deal closed unwon not archived; retried at the next run');
      }
    }
    return owing.length;
  }

  private async markLost(who: Identity, id: string, body: LostBody) {
    const links = await this.linksBefore(who, id);
    let owing: DealRecord | null = null;
    const answer = await this.deps.deals.update(who.teamId, id, async (current) => {
      requireOpen(current);
      const now = new Date();
      const move = {
        status: 'perdido' as const,
        loss_reason: body.loss_reason ?? null,
        competitor: body.competitor ?? null,
        lost_at: now,
        close_notes: body.notes ?? null,
        updated_at: now,
      };
      const next: DealRecord = { ...current, ...move };
      owing = current.case_request !== null ? next : null;
      const set = { ...move, ...derivedFields(next), ...(owing ? owesCaseArchive(who) : {}) };
      const previous = { status: current.status, loss_reason: current.loss_reason, competitor: current.competitor, lost_at: null };
      const event = newEvent('deal.lost', who.teamId, this.detailWith(next, links), previous, who.userId);
      return {
        result: { id, status: 'perdido', loss_reason: next.loss_reason, competitor: next.competitor, lost_at: iso(now) },
        write: { set, events: [event] },
      };
    });
    if (owing) await this.archiveOwedCaseNow(who, owing);
    return answer;
  }

  /** Archives from any status; an archived deal answers with its archived_at (idempotent). */
  async archive(who: Identity, id: string) {
    const links = await this.linksBefore(who, id);
    let owing: DealRecord | null = null;
    const answer = await this.deps.deals.update(who.teamId, id, async (current) => {
      if (current.status === 'arquivado') return { result: { id, status: 'arquivado', archived_at: iso(current.archived_at) } };
      const now = new Date();
      const move = { status: 'arquivado' as const, archived_at: now, updated_at: now };
      const next: DealRecord = { ...current, ...move };
      owing = current.status === 'ativo' && current.case_request !== null ? next : null;
      const set = { ...move, ...derivedFields(next), ...(owing ? owesCaseArchive(who) : {}) };
      const event = newEvent('deal.updated', who.teamId, this.detailWith(next, links), { status: current.status, archived_at: null }, who.userId);
      return { result: { id, status: 'arquivado', archived_at: iso(now) }, write: { set, events: [event] } };
    });
    if (owing) await this.archiveOwedCaseNow(who, owing);
    return answer;
  }

  /** decisions §5 "Deals summary", from one aggregation of the addends of the team's non-archived deals in one currency. */
  async summary(who: Identity, q: SummaryQuery): Promise<DealsSummary> {
    const currency = (q.currency ?? 'BRL').toUpperCase();
    const figures = new Map((await this.deps.deals.summary(who.teamId, currency)).map((r) => [r._id, r.v]));
    const sum = (k: string) => figures.get(k) ?? 0;
    const statuses = ['ativo', 'ganho', 'perdido'] as const;
    // by_phase: every phase of the pipeline, and any other phase open deals are still in.
    const pipeline = new Set(who.settings.deal_phases.map((p) => p.name));
    const phases = new Set<string>();
    for (const k of figures.keys()) {
      const [name, status, phase] = JSON.parse(k) as string[];
      if (name !== 'count') continue;
      phases.add(phase);
      if (status === 'ativo') pipeline.add(phase);
    }
    const over = (status: string, name: 'count' | 'value') => [...phases].reduce((n, phase) => n + sum(part[name](status, phase)), 0);
    const count = Object.fromEntries(statuses.map((s) => [s, over(s, 'count')])) as Record<(typeof statuses)[number], number>;
    const valueCents = statuses.reduce((n, s) => n + over(s, 'value'), 0);
    const closed = count.ganho + count.perdido;
    return {
      currency,
      total_deals: count.ativo + count.ganho + count.perdido,
      total_value: money(valueCents),
      weighted_value: money(sum(part.weighted)),
      by_phase: Object.fromEntries([...pipeline].map((p) => [p, { count: sum(part.count('ativo', p)), value: money(sum(part.value('ativo', p))) }])),
      by_status: {
        ativo: { count: count.ativo, value: money(over('ativo', 'value')) },
        ganho: { count: count.ganho, value: money(sum(part.wonFinal)) },
        perdido: { count: count.perdido, value: money(over('perdido', 'value')) },
      },
      conversion_rate: closed ? round((count.ganho / closed) * 100, 2) : 0,
      average_deal_size: sum(part.wonValued) ? money(Math.round(sum(part.wonFinal) / sum(part.wonValued))) : 0,
      average_sales_cycle_days: count.ganho ? round(sum(part.cycleMs) / count.ganho / DAY_MS, 1) : 0,
    };
  }

  // Questions other services ask (internal endpoints).

  phasesInUse(teamId: string, phases: string[]): Promise<string[]> {
    return this.deps.deals.phasesInUse(teamId, phases);
  }
}
