// One service's list as its day-bucket tests see it: the pages through the API, the
// records it stores, and the backfill of records stored before the bucket markers.
import type { Db } from 'mongodb';
import type { Identity } from '@lpm/shared/identity';
import type { ListBuckets } from '@lpm/shared/store/list-buckets';
import { expectBackfillKeepsPages, listThroughApi, type LegacyRecordsCheck, type ListUnderTest } from './list-pages.ts';
import type { ServiceUnderTest } from './service-under-test.ts';

export interface BucketedListOptions<R extends object> {
  /** Read at each call: a suite starts its service in beforeAll. */
  sut: () => ServiceUnderTest & { repository: { lists: ListBuckets } };
  collection: string;
  /** The list's path, e.g. /v1/clients. */
  path: string;
  sortKeys: readonly string[];
  /** The service's repository on a database (a process starting on it). */
  repository: LegacyRecordsCheck<R>['repository'];
}

export type LegacyRecords<R extends object> = Pick<LegacyRecordsCheck<R>, 'direction' | 'count' | 'legacy' | 'equal'>;

export interface BucketedList<R extends object> {
  /** The list as `who` gets it through the API, beside the plain query and the buckets. */
  listOf: (who: Identity) => ListUnderTest;
  /** The stored record `id` (a template for records written straight to the store). */
  stored: (id: string) => Promise<R>;
  /** Records copied from `template` as stored before the markers keep their pages through the backfill. */
  expectBackfillKeepsPages: (who: Identity, template: R, legacy: LegacyRecords<R>) => Promise<void>;
}

export function bucketedList<R extends object>(o: BucketedListOptions<R>): BucketedList<R> {
  const db = (): Db => o.sut().db;
  return {
    listOf: (who) =>
      listThroughApi({
        db: db(),
        collection: o.collection,
        lists: o.sut().repository.lists,
        sortKeys: o.sortKeys,
        get: (query) => o.sut().call(who, { method: 'GET', url: `${o.path}?${query}` }),
      }),
    stored: async (id) => {
      const record = await db()
        .collection(o.collection)
        .findOne({ _id: id as never });
      if (!record) throw new Error(`no ${o.collection} record ${id} is stored`);
      return record as unknown as R;
    },
    expectBackfillKeepsPages: (who, template, legacy) =>
      expectBackfillKeepsPages({
        db: db(),
        collection: o.collection,
        teamId: who.teamId,
        sortKeys: o.sortKeys,
        template,
        repository: o.repository,
        ...legacy,
      }),
  };
}
