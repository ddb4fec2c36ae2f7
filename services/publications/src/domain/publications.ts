// The publications use cases: the list and detail, a publication's status, case and
// deadline set by hand, matching when a case's number becomes known, and create
// mode's deadline activity, made once per publication (the activities service keeps
// it under the publication's Idempotency-Key; a debt on the record, settled by the
// repair, covers a process that dies in between).
import { caseNotFound, noFieldsToUpdate } from '@lpm/shared/errors';
import { newEvent } from '@lpm/shared/events';
import type { ListQuery } from '@lpm/shared/http/pagination';
import type { Identity } from '@lpm/shared/identity';
import type { Logger } from '@lpm/shared/logger';
import type { CaseLookup } from '@lpm/shared/upstream/cases-service';
import { invalidDateRange } from '../contract/publication-errors.ts';
import type { ListPublicationsQuery, PublicationView, UpdatePublicationBody } from '../contract/publication-schemas.ts';
import type { PublicationRecord } from '../data/publication-entity.ts';
import type { PublicationsRepository } from '../data/publications-repository.ts';
import type { CaseNumbersRepository } from '../data/case-numbers-repository.ts';
import type { PollRepository } from '../data/poll-repository.ts';
import type { PublicationDeadlines } from '../upstream/activities-service.ts';
import { cnjDigits } from './cnj.ts';
import { DeadlinePlans } from './deadline-plans.ts';
import { deadlineView, viewOf } from './publication-shape.ts';
import { storedContext, type TeamContext } from './team-context.ts';

export interface PublicationsDeps {
  publications: PublicationsRepository;
  caseNumbers: CaseNumbersRepository;
  poll: PollRepository;
  deadlines: PublicationDeadlines;
  cases: CaseLookup;
  logger?: Logger;
}

/** A case as its events tell it: its id and number, and the moment of the news. */
export interface CaseNews {
  teamId: string;
  caseId: string;
  number: string | null;
  asOf: Date;
}

export class Publications {
  readonly plans: DeadlinePlans;
  private readonly deps: PublicationsDeps;

  constructor(deps: PublicationsDeps) {
    this.deps = deps;
    this.plans = new DeadlinePlans(deps.deadlines);
  }

  async list(who: Identity, q: ListPublicationsQuery & ListQuery) {
    if (q.from && q.to && q.from > q.to) throw invalidDateRange();
    const matched = q.matched === undefined ? undefined : q.matched === 'true';
    const { records, total } = await this.deps.publications.list(who.teamId, { ...q, matched }, q);
    return { items: records.map(viewOf), total };
  }

  async get(who: Identity, id: string): Promise<PublicationView> {
    return viewOf(await this.deps.publications.get(who.teamId, id));
  }

  async update(who: Identity, id: string, body: UpdatePublicationBody): Promise<PublicationView> {
    if (Object.keys(body).length === 0) throw noFieldsToUpdate();
    const read = await this.deps.publications.get(who.teamId, id);
    if (body.case_id && !(await this.deps.cases.facts(who, body.case_id))) throw caseNotFound();
    const ctx = (await storedContext(this.deps.poll, who.teamId, who))!;
    const deadline = { ...ctx.publications.deadline, ...(body.deadline_days ? { days: body.deadline_days } : {}) };
    const dates = await this.plans.datesOf(ctx.who, read.made_available_date, deadline);
    const written = await this.deps.publications.updateRead(read, async (current) => {
      const set: Partial<PublicationRecord> = {};
      if (body.status !== undefined && body.status !== current.status) set.status = body.status;
      if (body.case_id !== undefined && body.case_id !== current.case_id) {
        Object.assign(set, { case_id: body.case_id, unmatched: body.case_id ? 0 : 1 });
        if (body.case_id && deadline.mode === 'create' && !current.activity_id) set.activity_pending = 1;
      }
      if (
        (set.case_id !== undefined || body.deadline_days) &&
        JSON.stringify(deadlineView(dates.deadline)) !== JSON.stringify(deadlineView(current.deadline))
      )
        set.deadline = dates.deadline;
      if (Object.keys(set).length === 0) return { result: current };
      const was = viewOf(current);
      const previous = Object.fromEntries(
        Object.keys(set)
          .filter((k) => k in was)
          .map((k) => [k, was[k as keyof PublicationView]]),
      );
      const next = { ...current, ...set, updated_at: new Date() };
      return {
        result: next,
        write: {
          set: { ...set, updated_at: next.updated_at },
          events: [newEvent('publication.updated', who.teamId, viewOf(next), previous, who.userId)],
        },
      };
    });
    if (!written.activity_pending) return viewOf(written);
    // Without an answer from the activities service the debt stays on the record, for the repair.
    return viewOf(await this.settleActivity(ctx, written).catch(() => written));
  }

  /** A case's number as its events tell it: kept in the view, and the team's unmatched publications of that number linked to it. */
  async recordCase(news: CaseNews): Promise<number> {
    const digits = cnjDigits(news.number);
    const kept = await this.deps.caseNumbers.record({
      _id: news.caseId,
      team_id: news.teamId,
      digits,
      as_of: news.asOf,
    });
    if (!kept || !digits) return 0;
    const ctx = await storedContext(this.deps.poll, news.teamId);
    let matched = 0;
    for (const read of await this.deps.publications.unmatchedOf(news.teamId, digits)) {
      const linked = await this.deps.publications.updateRead(read, async (current) => {
        if (current.case_id) return { result: null };
        const owes = ctx?.publications.deadline.mode === 'create' && !current.activity_id;
        const set: Partial<PublicationRecord> = {
          case_id: news.caseId,
          unmatched: 0,
          activity_pending: owes ? 1 : 0,
          updated_at: new Date(),
        };
        const next = { ...current, ...set };
        return {
          result: next,
          write: { set, events: [newEvent('publication.updated', news.teamId, viewOf(next), { case_id: null })] },
        };
      });
      if (!linked) continue;
      matched++;
      if (ctx && linked.activity_pending)
        await this.settleActivity(ctx, linked).catch((err: unknown) =>
          this.deps.logger?.warn({ err }, 'deadline activity left for the repair'),
        );
    }
    return matched;
  }

  /**
   * Create mode's activity of a matched publication: asked of the activities service
   * under the publication's key (the same activity however often asked), then linked
   * on the publication. Left owed (for the repair) when the service does not answer.
   */
  async settleActivity(ctx: TeamContext, read: PublicationRecord): Promise<PublicationRecord> {
    if (!read.case_id || read.activity_id) return read;
    const deadline =
      read.deadline ??
      (await this.plans.datesOf(ctx.who, read.made_available_date, ctx.publications.deadline)).deadline;
    const days = deadline?.days ?? ctx.publications.deadline.days;
    const counting = (deadline?.counting ?? ctx.publications.deadline.counting) as 'business' | 'calendar';
    const activityId = await this.deps.deadlines.createDeadline(ctx.who, {
      publicationId: read._id,
      caseId: read.case_id,
      title: `${read.document_type ?? read.kind ?? 'Publicação'} - ${read.case_number ?? 'sem número'}`,
      description: `${read.court} ${read.organ ?? ''}\n${read.text_plain}`.slice(0, 20_000),
      rule: { start: { made_available: read.made_available_date }, days, counting },
    });
    return this.deps.publications.updateRead(read, async (current) => {
      if (current.activity_id || !current.activity_pending) return { result: current };
      const set: Partial<PublicationRecord> = { activity_id: activityId, activity_pending: 0, updated_at: new Date() };
      const next = { ...current, ...set };
      const events = activityId
        ? [newEvent('publication.updated', current.team_id, viewOf(next), { activity_id: null })]
        : [];
      return { result: next, write: { set, events } };
    });
  }

  /** The repair: matched publications whose activity create mode still owes (a process died, the service was down). */
  async settleOwedActivities(): Promise<number> {
    let settled = 0;
    for (const read of await this.deps.publications.owedActivities()) {
      const ctx = await storedContext(this.deps.poll, read.team_id);
      if (!ctx) continue;
      const done = await this.settleActivity(ctx, read).catch((err: unknown) => {
        this.deps.logger?.warn({ err, publication: read._id }, 'deadline activity still owed');
        return read;
      });
      if (done.activity_pending === 0) settled++;
    }
    return settled;
  }
}
