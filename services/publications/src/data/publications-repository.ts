// Publications in the store: the record store for writes (outbox, lock, version),
// the list's filters, the unmatched publications a case number finds, and the
// create mode's owed activities.
import type { Db, Filter } from 'mongodb';
import { findPage, sortOrder, type ListQuery, type RecordPage } from '@lpm/shared/http/pagination';
import { escapeRegex, foldText } from '@lpm/shared/text';
import { RecordStore } from '@lpm/shared/store/record-store';
import type { Relay } from '@lpm/shared/store/record-store-types';
import { publicationNotFound } from '../contract/publication-errors.ts';
import type { PublicationStatus } from '../contract/publication-schemas.ts';
import type { PublicationRecord } from './publication-entity.ts';

export interface PublicationFilter {
  status?: PublicationStatus;
  case_id?: string;
  matched?: boolean;
  court?: string;
  from?: string;
  to?: string;
  search?: string;
}

const SORT_KEYS: Record<string, string[]> = {
  made_available_date: ['made_available_date'],
  created_at: ['created_at'],
};

export class PublicationsRepository extends RecordStore<PublicationRecord> {
  constructor(db: Db, relay: Relay) {
    super({ db, relay, collection: 'publications', idKind: 'pub', noun: 'publication', notFound: publicationNotFound });
  }

  async list(teamId: string, f: PublicationFilter, q: ListQuery): Promise<RecordPage<PublicationRecord>> {
    const filter: Filter<PublicationRecord> = { team_id: teamId };
    if (f.status) filter.status = f.status;
    if (f.case_id) filter.case_id = f.case_id;
    if (f.matched !== undefined) filter.unmatched = f.matched ? 0 : 1;
    if (f.court) filter.court = f.court.toUpperCase();
    if (f.from || f.to)
      filter.made_available_date = { ...(f.from ? { $gte: f.from } : {}), ...(f.to ? { $lte: f.to } : {}) };
    if (f.search) filter.search_text = { $regex: escapeRegex(foldText(f.search.trim())) };
    const sort = sortOrder(q.sort, '-made_available_date', SORT_KEYS);
    return findPage(this.collection, filter, q, { projection: this.projection(), sort });
  }

  /**
   * The team's publications of these ids already stored, by DJEN id. One read by `_id`
   * alone each: an `$in` is matched in Go over the team's, and with the team in the
   * filter too the local store may choose the team's index and read all of them.
   */
  async existing(teamId: string, ids: string[]): Promise<Map<number, PublicationRecord>> {
    const found = await Promise.all(
      ids.map((_id) => this.collection.findOne({ _id }, { projection: this.projection() })),
    );
    return new Map(found.filter((r) => r !== null && r.team_id === teamId).map((r) => [r!.djen_id, r!]));
  }

  /** The team's unmatched publications of a case number (its 20 digits). */
  unmatchedOf(teamId: string, digits: string, limit = 500): Promise<PublicationRecord[]> {
    return this.collection
      .find({ team_id: teamId, unmatched: 1, case_digits: digits }, { projection: this.projection(), limit })
      .toArray();
  }

  /** Publications whose deadline activity create mode still owes. */
  owedActivities(limit = 100): Promise<PublicationRecord[]> {
    return this.collection.find({ activity_pending: 1 }, { projection: this.projection(), limit }).toArray();
  }
}
