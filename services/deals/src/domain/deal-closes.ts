// How a deal is closed (docs/decisions.md §5 "Deals"): won, with the case the cases service
// makes for it when create_case asks; lost; archived. Each reads the deal once and
// writes it once under its lock (RecordStore.updateRead); of concurrent closes one
// wins and the others get 422. A deal closed unwon, or won without create_case, owes
// the case a won attempt with create_case may have made for it an archive, settled at
// once or by the case archive repair.
import { AppError } from '@lpm/shared/errors';
import { newEvent } from '@lpm/shared/events';
import { exact } from '@lpm/shared/http/schemas';
import type { Identity } from '@lpm/shared/identity';
import type { Logger } from '@lpm/shared/logger';
import type { Caller } from '@lpm/shared/upstream/service-client';
import type { ClientLinks } from '@lpm/shared/views/client-links';
import type { Links, RecordLinks } from '@lpm/shared/views/record-links';
import { fromCents } from '@lpm/shared/money';
import { iso } from '@lpm/shared/time';
import type { DealRecord } from '../data/deal-entity.ts';
import type { DealsRepository } from '../data/deals-repository.ts';
import type { DealArchived, DealLost, DealWon, LostBody, WonBody } from '../contract/deal-schemas.ts';
import type { CaseCreated, CaseForDeal, CaseRequest, DealCases } from '../upstream/cases-service.ts';
import { detailWith, requireOpen } from './deal-guards.ts';
import { derivedFields, stintsLeaving, toCents } from './deal-shape.ts';

export interface DealClosesDeps {
  deals: DealsRepository;
  cases: DealCases;
  links: RecordLinks;
  clientLinks: ClientLinks;
  logger?: Logger;
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

/**
 * The fields of a close of an open deal, which owes the case a won with
 * create_case may have made for it an archive (case_archive_pending): only the
 * cases service knows whether one was made.
 */
const owesCaseArchive = (who: Identity) => ({ case_archive_pending: 1, case_archive_by: who.userId });

/** The case asked for a deal won with create_case: case_data's title or the deal's, its area, the deal's client and responsible. */
function caseRequestOf(deal: DealRecord, body: WonBody): CaseRequest {
  return {
    title: body.case_data?.title?.trim() || deal.title,
    area: body.case_data?.area ?? null,
    client_id: deal.client_id,
    responsible_id: deal.responsible_id,
  };
}

/** A deal whose case, if one was made for it, no deal asks for: closed unwon, or won without create_case. */
type OwingCase = Pick<DealRecord, '_id' | 'team_id' | 'lost_at' | 'archived_at' | 'won_at'>;

export class DealCloses {
  private readonly deps: DealClosesDeps;

  constructor(deps: DealClosesDeps) {
    this.deps = deps;
  }

  /**
   * Marks the deal won. With create_case the case is asked of the cases service
   * first, once, with the deal's id as its natural key (the case carries its deal
   * under a unique key, so every attempt, however late or concurrent, gets the one
   * case back), and the deal is marked won only once the case exists: the deal read
   * before that call is written under the lock if it is still at the version read
   * (else read again there, its status checked again). An attempt that then finds
   * the deal lost or archived archives the case it got.
   */
  won(who: Identity, id: string, body: WonBody) {
    return this.closing(who, id, () => this.markWon(who, id, body));
  }

  lost(who: Identity, id: string, body: LostBody) {
    return this.closing(who, id, () => this.markLost(who, id, body));
  }

  /** Archives from any status; an archived deal answers with its archived_at (idempotent). */
  async archive(who: Identity, id: string) {
    const read = await this.deps.deals.get(who.teamId, id);
    const links = await this.deps.links.of(who.teamId, [read]);
    let owing: DealRecord | null = null;
    const answer = await this.deps.deals.updateRead(read, async (current) => {
      owing = null;
      const archived = exact<DealArchived>();
      if (current.status === 'arquivado')
        return { result: archived({ id, status: 'arquivado', archived_at: iso(current.archived_at) }) };
      const now = new Date();
      const move = { status: 'arquivado' as const, archived_at: now, updated_at: now };
      const next: DealRecord = { ...current, ...move };
      owing = current.status === 'ativo' ? next : null;
      const set = { ...move, ...derivedFields(next), ...(owing ? owesCaseArchive(who) : {}) };
      const event = newEvent(
        'deal.updated',
        who.teamId,
        detailWith(next, links),
        { status: current.status, archived_at: null },
        who.userId,
      );
      return { result: archived({ id, status: 'arquivado', archived_at: iso(now) }), write: { set, events: [event] } };
    });
    if (owing) await this.archiveOwedCaseNow(who, owing);
    return answer;
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
    const finalSent =
      body.final_value === undefined || body.final_value === null
        ? undefined
        : toCents('final_value', body.final_value);
    const read = await this.deps.deals.get(who.teamId, id);
    requireOpen(read);
    // No lock is held across the cases service's answer.
    const made = body.create_case ? await this.deps.cases.createForDeal(who, id, caseRequestOf(read, body)) : null;
    const links = await this.deps.links.of(who.teamId, [read], this.clientChecked(who, read, made));
    const caseCreated: CaseCreated | null = made && { id: made.id, title: made.title };
    let closedMeanwhile: DealRecord | null = null;
    let owing: DealRecord | null = null;
    const answer = await this.deps.deals.updateRead(read, async (current) => {
      if (caseCreated !== null && closedUnwon(current)) {
        // The case this attempt got has no won deal behind it: owed an archive, durably (the close may have found no case yet).
        closedMeanwhile = current;
        return {
          result: null,
          write: current.case_archive_pending ? undefined : { set: owesCaseArchive(who), events: [] },
        };
      }
      requireOpen(current);
      const won = this.wonWrite(who, current, { finalSent, notes: body.notes ?? null, caseCreated, links });
      // Won without create_case: a case an earlier attempt with create_case made (and never reported) is owed an archive.
      owing = caseCreated === null ? { ...current, ...won.write.set } : null;
      return won;
    });
    if (owing) await this.archiveOwedCaseNow(who, owing);
    if (closedMeanwhile) {
      // Outside the deal's lock: no network wait under it.
      await this.archiveOwedCaseNow(who, closedMeanwhile);
      requireOpen(closedMeanwhile);
    }
    return answer!;
  }

  /** The deal's client as the cases service's check found it just now, as known links: the event shows it without a read of the local view. */
  private clientChecked(who: Identity, read: DealRecord, made: CaseForDeal | null): Links | undefined {
    const client = made?.client;
    if (!client || client.id !== read.client_id) return undefined;
    return {
      clients: new Map([[client.id, this.deps.clientLinks.viewOf(who.teamId, client)]]),
      cases: new Map(),
      users: new Map(),
    };
  }

  private wonWrite(
    who: Identity,
    current: DealRecord,
    {
      finalSent,
      notes,
      caseCreated,
      links,
    }: { finalSent: number | undefined; notes: string | null; caseCreated: CaseCreated | null; links: Links },
  ) {
    const now = new Date();
    const move = {
      status: 'ganho' as const,
      final_value_cents: finalSent ?? current.value_cents,
      won_at: now,
      close_notes: notes,
      phase_stints: stintsLeaving(current, now),
      phase_entered_at: now,
      case_created: caseCreated,
      updated_at: now,
    };
    const next: DealRecord = { ...current, ...move };
    const set = { ...move, ...derivedFields(next), ...(caseCreated === null ? owesCaseArchive(who) : {}) };
    const previous = { status: current.status, final_value: fromCents(current.final_value_cents), won_at: null };
    const event = newEvent('deal.won', who.teamId, detailWith(next, links), previous, who.userId);
    const result = exact<DealWon>()({
      id: current._id,
      status: 'ganho',
      final_value: fromCents(next.final_value_cents),
      won_at: iso(now),
      ...(caseCreated ? { case_created: caseCreated } : {}),
    });
    return { result, write: { set, events: [event] } };
  }

  private async markLost(who: Identity, id: string, body: LostBody) {
    const read = await this.deps.deals.get(who.teamId, id);
    const links = await this.deps.links.of(who.teamId, [read]);
    let owing: DealRecord | null = null;
    const answer = await this.deps.deals.updateRead(read, async (current) => {
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
      owing = next;
      const set = { ...move, ...derivedFields(next), ...owesCaseArchive(who) };
      const previous = {
        status: current.status,
        loss_reason: current.loss_reason,
        competitor: current.competitor,
        lost_at: null,
      };
      const event = newEvent('deal.lost', who.teamId, detailWith(next, links), previous, who.userId);
      return {
        result: exact<DealLost>()({
          id,
          status: 'perdido',
          loss_reason: next.loss_reason,
          competitor: next.competitor,
          lost_at: iso(now),
        }),
        write: { set, events: [event] },
      };
    });
    if (owing) await this.archiveOwedCaseNow(who, owing);
    return answer;
  }

  /**
   * A deal closed unwon owes the case a won with create_case may have made for it
   * an archive, so no case stays open for a deal that was not won. The close writes
   * the debt (case_archive_pending) with itself; this asks the cases service and
   * clears it. The close stands whatever happens here: what fails, or a process
   * that dies first, is left to the case archive repair (settleCaseArchives).
   */
  private async archiveOwedCaseNow(who: Identity, closed: OwingCase): Promise<void> {
    try {
      await this.archiveOwedCase(who, closed);
    } catch (err) {
      this.deps.logger?.warn(
        { err, deal: closed._id },
        'case of a deal closed unwon not archived yet; the case archive repair archives it',
      );
    }
  }

  /**
   * Archives the case the deal owes an archive. The debt is cleared once a case was
   * archived, or once no case turned up for CASE_ARCHIVE_SETTLE_MS after the close:
   * until then a won attempt still under way may yet make one (it then finds the
   * deal closed and writes the debt itself, unless it dies first).
   */
  private async archiveOwedCase(who: Caller, closed: OwingCase): Promise<void> {
    const archived = await this.deps.cases.archiveForDeal(who, closed._id);
    const closedAt = (closed.lost_at ?? closed.archived_at ?? closed.won_at)?.getTime() ?? 0;
    if (archived !== null || Date.now() - closedAt >= CASE_ARCHIVE_SETTLE_MS)
      await this.deps.deals.caseArchived(closed.team_id, closed._id);
  }

  /** The case archive repair: the archives owed by deals closed unwon whose process died, or whose cases service failed, before archiving. */
  async settleCaseArchives(): Promise<number> {
    const owing = await this.deps.deals.owedCaseArchives(OWED_BATCH);
    for (const deal of owing) {
      try {
        await this.archiveOwedCase({ teamId: deal.team_id, userId: deal.case_archive_by ?? undefined }, deal);
      } catch (err) {
        this.deps.logger?.warn(
          { err, deal: deal._id },
          'case of a deal closed unwon not archived; retried at the next run',
        );
      }
    }
    return owing.length;
  }
}
