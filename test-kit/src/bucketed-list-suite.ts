// A day-bucket list test file's service, started for the file, with the calls it makes
// on the listed resource and its list as bucketedList sees it.
import type { Identity } from '@lpm/shared/identity';
import type { ListBuckets } from '@lpm/shared/store/list-buckets';
import { bucketedList, type BucketedList, type BucketedListOptions, type LegacyRecords } from './bucketed-list.ts';
import { resourceCalls, type ResourceCalls } from './resource-calls.ts';
import { serviceForSuite, type ServiceUnderTest } from './service-under-test.ts';

type ListedService = ServiceUnderTest & { repository: { lists: ListBuckets } };

export interface BucketedListSuiteOptions<S extends ListedService, R extends object> extends Omit<
  BucketedListOptions<R>,
  'sut'
> {
  start: () => Promise<S>;
  /** What a create POSTs under the test's own fields. */
  defaults: Record<string, unknown>;
}

export type BucketedListSuite<S extends ListedService, R extends object> = {
  /** The service, once the file's beforeAll has started it. */
  sut: () => S;
  /**
   * Records copied from one the API creates for `who` (the defaults), as stored
   * before the markers existed, keep their pages through the backfill.
   */
  expectBackfillKeepsPages: (who: Identity, legacy: LegacyRecords<R>) => Promise<void>;
} & ResourceCalls &
  Omit<BucketedList<R>, 'expectBackfillKeepsPages'>;

/** Starts the service before the file's tests and closes it after. */
export function bucketedListSuite<S extends ListedService, R extends object>(
  o: BucketedListSuiteOptions<S, R>,
): BucketedListSuite<S, R> {
  let started: S | undefined;
  serviceForSuite(o.start, (s) => (started = s));
  const sut = () => started!;
  const calls = resourceCalls(sut, o.path, o.defaults);
  const list = bucketedList<R>({ ...o, sut });
  return {
    sut,
    ...calls,
    ...list,
    expectBackfillKeepsPages: async (who, legacy) =>
      list.expectBackfillKeepsPages(who, await list.stored(await calls.create(who)), legacy),
  };
}
