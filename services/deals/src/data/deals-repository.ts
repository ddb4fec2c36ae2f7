// Deals in the store: the record store for writes (outbox, lock, version), the
// list query on the fields derived for sorting without collation, the summary and
// the team's history as one $match/$group($sum) each (what FerretDB serves), and
// the phases other services ask about. The list by creation instant, filtered by
// nothing but status and phase, is read by day buckets (store/list-buckets.ts).
import type { Db, Filter } from 'mongodb';
import { findPage, sortOrder, type ListQuery, type RecordPage } from '@lpm/shared/http/pagination';
import type { Logger } from '@lpm/shared/logger';
import { BY_CREATION } from '@lpm/shared/store/list-buckets';
import { ListedRecordStore } from '@lpm/shared/store/listed-record-store';
import { phasesInUse, rangeOf, TIMESTAMP_SORTS } from '@lpm/shared/store/list-queries';
import type { Relay } from '@lpm/shared/store/record-store-types';
import { dealNotFound } from '../contract/deal-errors.ts';
import { segmentKey, type DealRecord, type DealStatus, type PhaseStint } from './deal-entity.ts';

export interface DealFilter {
  status?: DealStatus;
  phase?: string;
  client_id?: string;
  responsible_id?: string;
  source?: string;
  /** Value range in cents, inclusive. */
  value?: { min?: number; max?: number };
  /** Created at or after `from` and before `before`. */
  created?: { from?: Date; before?: Date };
}

/** One figure of the summary (a SummaryPart key) summed over the team's non-archived deals in one currency. */
export interface SummaryRow {
  _id: string;
  v: number;
}

const SORT_KEYS: Record<string, (keyof DealRecord & string)[]> = {
  ...TIMESTAMP_SORTS,
  title: ['title_sort'],
  probability: ['probability'],
  // Deals without a value or a close date come last in either direction.
  value: ['value_missing', 'value_cents'],
  expected_close_date: ['close_date_missing', 'expected_close_date'],
};

/** Won deals read for the median time in each phase: the most recent ones. */
const HISTORY_WON_DEALS = 1000;

export class DealsRepository extends ListedRecordStore<DealRecord> {
  constructor(db: Db, relay: Relay, logger?: Logger) {
    super({
      db,
      relay,
      collection: 'deals',
      idKind: 'deal',
      noun: 'deal',
      notFound: dealNotFound,
      lists: { ...BY_CREATION, counted: ['status', 'phase'], logger },
    });
  }

  async list(teamId: string, f: DealFilter, q: ListQuery): Promise<RecordPage<DealRecord>> {
    const bucketed = await this.bucketPage(teamId, f, q, '-created_at');
    if (bucketed) return bucketed;
    const filter: Filter<DealRecord> = { team_id: teamId };
    for (const k of ['status', 'phase', 'client_id', 'responsible_id', 'source'] as const)
      if (f[k]) Object.assign(filter, { [k]: f[k] });
    if (f.value) filter.value_cents = rangeOf({ $gte: f.value.min, $lte: f.value.max });
    if (f.created) filter.created_at = rangeOf({ $gte: f.created.from, $lt: f.created.before });
    return findPage(this.collection, filter, q, {
      projection: this.projection(),
      sort: sortOrder(q.sort, '-created_at', SORT_KEYS),
    });
  }

  /**
   * Every figure of the summary summed over the team's non-archived deals in
   * `currency` (never two currencies in one sum), in one aggregation: each deal
   * carries its addends (summary_parts), unwound and summed by figure. One
   * accumulator, because FerretDB 1.24 computes only the first accumulator of a
   * $group (the others come back 0).
   */
  summary(teamId: string, currency: string): Promise<SummaryRow[]> {
    return this.collection
      .aggregate<SummaryRow>([
        { $match: { team_id: teamId, currency, status: { $ne: 'arquivado' } } },
        { $unwind: '$summary_parts' },
        { $group: { _id: '$summary_parts.k', v: { $sum: '$summary_parts.v' } } },
      ])
      .toArray();
  }

  /** The team's closed deals counted per source, value band and outcome (history_key), in one aggregation. */
  async closedBySegment(teamId: string): Promise<Map<string, { closed: number; won: number }>> {
    const rows = await this.collection
      .aggregate<{ _id: string; n: number }>([
        { $match: { team_id: teamId, outcome: { $in: ['won', 'lost'] } } },
        { $group: { _id: '$history_key', n: { $sum: 1 } } },
      ])
      .toArray();
    const segments = new Map<string, { closed: number; won: number }>();
    for (const r of rows) {
      const [source, band, outcome] = JSON.parse(r._id) as [string | null, string, string];
      const key = segmentKey(source, band);
      const s = segments.get(key) ?? { closed: 0, won: 0 };
      s.closed += r.n;
      if (outcome === 'won') s.won += r.n;
      segments.set(key, s);
    }
    return segments;
  }

  /** The time the team's most recent won deals spent in each phase. */
  async wonStints(teamId: string): Promise<PhaseStint[][]> {
    const rows = await this.collection
      .find<Pick<DealRecord, 'phase_stints'>>(
        { team_id: teamId, outcome: 'won' },
        { projection: { _id: 0, phase_stints: 1 }, sort: { won_at: -1, _id: -1 }, limit: HISTORY_WON_DEALS },
      )
      .toArray();
    return rows.map((r) => r.phase_stints ?? []);
  }

  /** Up to `limit` deals closed unwon whose case still waits to be archived (case_archive_pending, an equality the local store's index serves). */
  owedCaseArchives(
    limit: number,
  ): Promise<Pick<DealRecord, '_id' | 'team_id' | 'case_archive_by' | 'lost_at' | 'archived_at' | 'won_at'>[]> {
    return this.collection
      .find<Pick<DealRecord, '_id' | 'team_id' | 'case_archive_by' | 'lost_at' | 'archived_at' | 'won_at'>>(
        { case_archive_pending: 1 } as Filter<DealRecord>,
        {
          projection: { _id: 1, team_id: 1, case_archive_by: 1, lost_at: 1, archived_at: 1, won_at: 1 },
          limit,
        },
      )
      .toArray();
  }

  /** The case the deal `id` owed an archive is archived (or was never made): it owes nothing any more. */
  caseArchived(teamId: string, id: string): Promise<void> {
    return this.update(teamId, id, async (current) => ({
      result: undefined,
      write: current.case_archive_pending
        ? { set: { case_archive_pending: 0, case_archive_by: null }, events: [] }
        : undefined,
    }));
  }

  phasesInUse(teamId: string, phases: string[]): Promise<string[]> {
    return phasesInUse(this.collection, teamId, phases);
  }
}
