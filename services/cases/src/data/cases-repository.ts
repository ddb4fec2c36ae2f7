// Cases in the store: the record store for writes (outbox, lock, version,
// duplicate number; the timeline read only when asked for), the list query on the
// fields derived for sorting without collation, and the questions other services
// ask (counts, active cases, phases in use). The list by creation instant, filtered
// by nothing but status, phase and priority, is read by day buckets (store/list-buckets.ts);
// a search is answered in process (store/search-index.ts).
import type { Db, Filter } from 'mongodb';
import { findPage, pageWindow, sortOrder, type ListQuery, type RecordPage } from '@lpm/shared/http/pagination';
import type { Logger } from '@lpm/shared/logger';
import { BY_CREATION } from '@lpm/shared/store/list-buckets';
import { SearchedRecordStore } from '@lpm/shared/store/listed-record-store';
import { SWEEP } from '@lpm/shared/store/time-budgets';
import { phasesInUse, rangeOf, TIMESTAMP_SORTS } from '@lpm/shared/store/list-queries';
import type { Relay } from '@lpm/shared/store/record-store-types';
import { escapeRegex, foldText } from '@lpm/shared/text';
import { caseNotFound } from '@lpm/shared/errors';
import { duplicateNumber } from '../contract/case-errors.ts';
import type { Priority } from '@lpm/shared/priority';
import { dealOriginKey, type CaseRecord, type CaseStatus } from './case-entity.ts';

export interface CaseFilter {
  status?: CaseStatus;
  priority?: Priority;
  area?: string;
  client_id?: string;
  responsible_id?: string;
  phase?: string;
  /** Created at or after `from` and before `before`. */
  created?: { from?: Date; before?: Date };
  search?: string;
}

/** The fields a list filters on by equality. */
const FILTERED = ['status', 'priority', 'area', 'client_id', 'responsible_id', 'phase'] as const;

const SORT_KEYS: Record<string, (keyof CaseRecord & string)[]> = {
  ...TIMESTAMP_SORTS,
  title: ['title_sort'],
  priority: ['priority_rank'],
  // Cases without an SLA date come last in either direction.
  sla_date: ['sla_missing', 'sla_date'],
};

export class CasesRepository extends SearchedRecordStore<CaseRecord> {
  constructor(db: Db, relay: Relay, logger?: Logger) {
    super({
      db,
      relay,
      collection: 'cases',
      idKind: 'case',
      noun: 'case',
      notFound: caseNotFound,
      duplicate: duplicateNumber,
      heavy: ['timeline', 'counted_events'],
      signalFields: ['sla_warning_at', 'sla_overdue_at'],
      lists: { ...BY_CREATION, counted: ['status', 'phase', 'priority'], logger },
      search: {
        texts: ['search_text'],
        fields: {
          ...Object.fromEntries(FILTERED.map((f) => [f, 'code' as const])),
          created_at: 'time',
          updated_at: 'time',
          title_sort: 'text',
          priority_rank: 'code',
          sla_missing: 'code',
          sla_date: 'code',
        },
        logger,
      },
    });
  }

  async list(teamId: string, f: CaseFilter, q: ListQuery): Promise<RecordPage<CaseRecord>> {
    const search = f.search?.trim();
    const bucketed = search ? null : await this.bucketPage(teamId, f, q, '-created_at');
    if (bucketed) return bucketed;
    const filter: Filter<CaseRecord> = {};
    for (const k of FILTERED) if (f[k]) Object.assign(filter, { [k]: f[k] });
    if (f.created) filter.created_at = rangeOf({ $gte: f.created.from, $lt: f.created.before });
    if (search) {
      const sort = sortOrder(q.sort, '-created_at', SORT_KEYS);
      const found = await this.search.page<CaseRecord>(
        teamId,
        { contains: { search_text: foldText(search) }, where: filter, sort, ...pageWindow(q) },
        this.projection(),
      );
      if (found) return found;
      filter.search_text = new RegExp(escapeRegex(foldText(search)));
    }
    return this.page({ ...filter, team_id: teamId }, q);
  }

  /** The case a deal's won with create_case made (its unique origin key), or null. */
  byOriginDeal(teamId: string, dealId: string): Promise<CaseRecord | null> {
    return this.collection.findOne<CaseRecord>(
      { origin_key: dealOriginKey(dealId), team_id: teamId } as Filter<CaseRecord>,
      { projection: this.projection() },
    );
  }

  listForClient(teamId: string, clientId: string, q: ListQuery): Promise<RecordPage<CaseRecord>> {
    return this.page({ team_id: teamId, client_id: clientId }, q);
  }

  private page(filter: Filter<CaseRecord>, q: ListQuery): Promise<RecordPage<CaseRecord>> {
    return findPage(this.collection, filter, q, {
      projection: this.projection(),
      sort: sortOrder(q.sort, '-created_at', SORT_KEYS),
    });
  }

  /** How many cases each client has (every client asked for appears, 0 when none). */
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
    return (
      (await this.collection.findOne(
        { team_id: teamId, client_id: clientId, status: 'ativo' },
        { projection: { _id: 1 } },
      )) !== null
    );
  }

  /**
   * Every team's cases after `after` in `_id` order, `limit` of them, with only what a
   * view of case numbers keeps. FerretDB sorts in Go over every case after `after`:
   * a whole-collection read, hence the sweep's budget.
   */
  numbersAfter(after: string | null, limit: number) {
    return this.collection
      .find(after === null ? {} : { _id: { $gt: after } }, {
        projection: { _id: 1, team_id: 1, number: 1, updated_at: 1 },
        sort: { _id: 1 },
        limit,
        ...SWEEP,
      })
      .toArray();
  }

  phasesInUse(teamId: string, phases: string[]): Promise<string[]> {
    return phasesInUse(this.collection, teamId, phases);
  }
}
