// Deal use cases (docs/decisions.md §5 "Deals"): phases and probabilities from the team's
// pipeline, links to clients and users checked at write time, phase moves, the
// closes (won, lost, archive: deal-closes.ts), the summary, and ai_insights from the
// team's own history. Every write stores the record and its events in one document
// write (data/deals-repository.ts), from the deal read once before the lock.
import { FieldChanges, trimmedText, type SentFields } from '@lpm/shared/changes';
import { noFieldsToUpdate } from '@lpm/shared/errors';
import { newEvent } from '@lpm/shared/events';
import { exact } from '@lpm/shared/http/schemas';
import { fromCents } from '@lpm/shared/money';
import type { ClientLinks } from '@lpm/shared/views/client-links';
import { RecordLinks, type Links, type UserLookup } from '@lpm/shared/views/record-links';
import type { Identity } from '@lpm/shared/identity';
import type { Logger } from '@lpm/shared/logger';
import { newId } from '@lpm/shared/ids';
import { DAY_MS, iso, zonedDays } from '@lpm/shared/time';
import type { DealRecord } from '../data/deal-entity.ts';
import type { DealFilter, DealsRepository } from '../data/deals-repository.ts';
import type {
  CreateDealBody,
  DealDetail,
  DealListQuery,
  DealPhaseMove,
  DealsSummary,
  LostBody,
  PhaseBody,
  SummaryQuery,
  UpdateDealBody,
  WonBody,
} from '../contract/deal-schemas.ts';
import type { DealActivities } from '../upstream/activities-service.ts';
import type { DealCases } from '../upstream/cases-service.ts';
import { DealCloses } from './deal-closes.ts';
import { invalidPhase } from '../contract/deal-errors.ts';
import { detailWith, requireOpen } from './deal-guards.ts';
import {
  WRITABLE_FIELDS,
  stintsLeaving,
  apiNames,
  part,
  createdShape,
  derivedFields,
  detailShape,
  listItemShape,
  toCents,
} from './deal-shape.ts';
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
  return 'value' in body
    ? { ...rest, value_cents: value === null || value === undefined ? null : toCents('value', value) }
    : rest;
}

/** The fields of a move to `phase` at `now`: the time in the phase left is added to its stints. */
function moveTo(current: DealRecord, phase: string, now: Date) {
  return {
    phase,
    previous_phase: current.phase,
    phase_changed_at: now,
    phase_entered_at: now,
    phase_stints: stintsLeaving(current, now),
  };
}

const round = (n: number, decimals: number) => Number(n.toFixed(decimals));
const money = (cents: number) => cents / 100;

export class Deals {
  private readonly deps: DealsDeps;
  private readonly links: RecordLinks;
  private readonly closes: DealCloses;

  constructor(deps: DealsDeps) {
    this.deps = deps;
    this.links = new RecordLinks({ clients: deps.clientLinks, users: deps.users });
    this.closes = new DealCloses({
      deals: deps.deals,
      cases: deps.cases,
      links: this.links,
      clientLinks: deps.clientLinks,
      logger: deps.logger,
    });
  }

  /** The deal as a write under the lock starts from, and the links it will show (those `checked` found are not read back), fetched before the lock: no network wait under it. */
  private async readForWrite(
    who: Identity,
    id: string,
    body: LinkFields = {},
    checked?: Links,
  ): Promise<{ read: DealRecord; links: Links }> {
    const read = await this.deps.deals.get(who.teamId, id);
    return { read, links: await this.links.of(who.teamId, [read, body], checked) };
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
    const checked = await this.links.check(who, body);
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
      case_created: null,
      case_archive_pending: 0,
      case_archive_by: null,
      created_at: now,
      updated_at: now,
      version: 1,
    };
    const record: DealRecord = { ...base, ...derivedFields(base) };
    const detail = detailShape(record, await this.links.of(who.teamId, [record], checked));
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
    const ai_insights = insightsOf(
      record,
      phaseProbability,
      { segments, wonStints },
      who.settings.timezone,
      new Date(),
      activities,
    );
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
    const created = zonedDays(q.from, q.to, who.settings.timezone);
    if (created) filter.created = created;
    const { records, total } = await this.deps.deals.list(who.teamId, filter, q);
    const links = await this.links.of(who.teamId, records);
    return { items: records.map((r) => listItemShape(r, links)), total };
  }

  async update(who: Identity, id: string, body: UpdateDealBody) {
    if (Object.keys(body).length === 0) throw noFieldsToUpdate();
    if (body.phase !== undefined) this.checkPhase(who, body.phase);
    const sentFields = recordFields(body);
    const checked = await this.links.check(who, body);
    const { read, links } = await this.readForWrite(who, id, body, checked);
    return this.deps.deals.updateRead(read, async (current) => {
      const { next, sent } = fields.apply(current, sentFields, WRITABLE_FIELDS);
      const now = new Date();
      const moved = next.phase !== current.phase;
      if (moved) {
        requireOpen(current);
        Object.assign(next, moveTo(current, next.phase, now));
      }
      const { changed, previous } = fields.diff(
        [...WRITABLE_FIELDS, 'previous_phase', 'phase_changed_at'],
        current,
        next,
      );
      if (changed.length === 0) return { result: { id, ...apiNames(sent), updated_at: iso(current.updated_at) } };

      next.updated_at = now;
      Object.assign(next, derivedFields(next));
      const detail = detailWith(next, links);
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
    const { read, links } = await this.readForWrite(who, id);
    return this.deps.deals.updateRead(read, async (current) => {
      requireOpen(current);
      if (current.phase === body.phase) {
        return {
          result: exact<DealPhaseMove>()({
            id,
            phase: current.phase,
            previous_phase: current.previous_phase,
            phase_changed_at: iso(current.phase_changed_at),
            updated_at: iso(current.updated_at),
          }),
        };
      }
      const now = new Date();
      const move = moveTo(current, body.phase, now);
      const next: DealRecord = { ...current, ...move, phase_notes: body.notes ?? null, updated_at: now };
      const set = { ...move, phase_notes: next.phase_notes, updated_at: now, ...derivedFields(next) };
      const detail = detailWith(next, links);
      const previous = {
        phase: current.phase,
        previous_phase: current.previous_phase,
        phase_changed_at: iso(current.phase_changed_at),
      };
      const events = [
        newEvent('deal.updated', who.teamId, detail, previous, who.userId),
        this.phaseChanged(who, current, detail),
      ];
      return {
        result: exact<DealPhaseMove>()({
          id,
          phase: body.phase,
          previous_phase: current.phase,
          phase_changed_at: iso(now),
          updated_at: iso(now),
        }),
        write: { set, events },
      };
    });
  }

  private phaseChanged(who: Identity, current: DealRecord, detail: ReturnType<typeof detailShape>) {
    return newEvent(
      'deal.phase_changed',
      who.teamId,
      detail,
      { phase: current.phase, phase_changed_at: iso(current.phase_changed_at) },
      who.userId,
    );
  }

  won(who: Identity, id: string, body: WonBody) {
    return this.closes.won(who, id, body);
  }

  lost(who: Identity, id: string, body: LostBody) {
    return this.closes.lost(who, id, body);
  }

  archive(who: Identity, id: string) {
    return this.closes.archive(who, id);
  }

  /** The case archive repair (deal-closes.ts). */
  settleCaseArchives(): Promise<number> {
    return this.closes.settleCaseArchives();
  }

  /**
   * docs/decisions.md §5 "Deals summary", from one aggregation of the addends of the
   * team's non-archived deals in one currency.
   */
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
    const over = (status: string, name: 'count' | 'value') =>
      [...phases].reduce((n, phase) => n + sum(part[name](status, phase)), 0);
    const count = Object.fromEntries(statuses.map((s) => [s, over(s, 'count')])) as Record<
      (typeof statuses)[number],
      number
    >;
    const valueCents = statuses.reduce((n, s) => n + over(s, 'value'), 0);
    const closed = count.ganho + count.perdido;
    return {
      currency,
      total_deals: count.ativo + count.ganho + count.perdido,
      total_value: money(valueCents),
      weighted_value: money(sum(part.weighted)),
      by_phase: Object.fromEntries(
        [...pipeline].map((p) => [
          p,
          { count: sum(part.count('ativo', p)), value: money(sum(part.value('ativo', p))) },
        ]),
      ),
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
