// Clients in the store: the record store for writes (outbox, lock, version,
// duplicate document), and the list query with search and sorting on the fields
// derived for a store without collation. The list by creation instant, filtered by
// nothing but type, status and segment, is read by day buckets (store/list-buckets.ts);
// a search is answered in process (store/search-index.ts).
import type { Db, Filter } from 'mongodb';
import type { ListQuery, RecordPage } from '@lpm/shared/http/pagination';
import { findPage, pageWindow, parseSort, storeSort } from '@lpm/shared/http/pagination';
import type { Logger } from '@lpm/shared/logger';
import { BY_CREATION } from '@lpm/shared/store/list-buckets';
import { SearchedRecordStore } from '@lpm/shared/store/listed-record-store';
import type { Relay } from '@lpm/shared/store/record-store-types';
import { escapeRegex, foldText } from '@lpm/shared/text';
import { clientNotFound } from '@lpm/shared/errors';
import { duplicateDocument } from '../contract/client-errors.ts';
import type { ClientRecord } from './client-entity.ts';

export interface ClientFilter {
  type?: ClientRecord['type'];
  status?: ClientRecord['status'];
  segment?: string;
  search?: string;
}

const SORT_FIELD: Record<string, keyof ClientRecord & string> = {
  created_at: 'created_at',
  updated_at: 'updated_at',
  name: 'name_sort',
};

export class ClientsRepository extends SearchedRecordStore<ClientRecord> {
  constructor(db: Db, relay: Relay, logger?: Logger) {
    super({
      db,
      relay,
      collection: 'clients',
      idKind: 'cli',
      noun: 'client',
      notFound: clientNotFound,
      duplicate: (r) => duplicateDocument(r.type),
      lists: { ...BY_CREATION, counted: ['type', 'status', 'segment'], logger },
      search: {
        texts: ['search_text', 'document_digits'],
        fields: {
          type: 'code',
          status: 'code',
          segment: 'code',
          created_at: 'time',
          updated_at: 'time',
          name_sort: 'text',
        },
        logger,
      },
    });
  }

  /**
   * Keeps the cases service's count of the client's cases, unless a count asked
   * for later is kept already: the latest question has the truest answer, in
   * whatever order the answers come back. No event: the client did not change.
   */
  async keepCasesCount(teamId: string, id: string, count: number, askedAt: Date): Promise<void> {
    await this.update(teamId, id, async (current) => {
      if (current.cases_counted_at && current.cases_counted_at >= askedAt) return { result: undefined };
      return { result: undefined, write: { set: { cases_count: count, cases_counted_at: askedAt }, events: [] } };
    });
  }

  /** One page of the team's clients and how many match in all. */
  async list(teamId: string, f: ClientFilter, q: ListQuery): Promise<RecordPage<ClientRecord>> {
    const sort = parseSort(q.sort, '-created_at');
    const { skip, limit } = pageWindow(q);
    const search = f.search?.trim();
    const bucketed = search
      ? null
      : await this.lists.listPage<ClientRecord>(
          teamId,
          { type: f.type, status: f.status, segment: f.segment },
          sort,
          { skip, limit },
          this.projection(),
        );
    if (bucketed) return bucketed;
    const filter: Filter<ClientRecord> = {};
    if (f.type) filter.type = f.type;
    if (f.status) filter.status = f.status;
    if (f.segment) filter.segment = f.segment;
    if (search) {
      const contains: Record<string, string> = { search_text: foldText(search) };
      const bare = search.replace(/[\s.\-/]/g, '');
      if (/^\d+$/.test(bare)) contains.document_digits = bare;
      const order = storeSort([SORT_FIELD[sort.field]], sort.direction);
      const found = await this.search.page<ClientRecord>(
        teamId,
        { contains, where: filter, sort: order, skip, limit },
        this.projection(),
      );
      if (found) return found;
      filter.$or = Object.entries(contains).map(([field, needle]) => ({ [field]: new RegExp(escapeRegex(needle)) }));
    }
    filter.team_id = teamId;
    return findPage(this.collection, filter, q, {
      projection: this.projection(),
      sort: { [SORT_FIELD[sort.field]]: sort.direction, _id: sort.direction },
    });
  }
}
