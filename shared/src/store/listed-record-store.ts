// Record stores that are given list counts, and search too: their options require
// them, so `lists` and `search` are there, never null, for the repositories built on them.
import type { ListBuckets } from './list-buckets.ts';
import { RecordStore } from './record-store.ts';
import type { OwnedRecord, RecordStoreOptions } from './record-store-types.ts';
import type { SearchIndex } from './search-index.ts';

type With<R extends OwnedRecord, K extends 'lists' | 'search'> = RecordStoreOptions<R> &
  Required<Pick<RecordStoreOptions<R>, K>>;

export class ListedRecordStore<R extends OwnedRecord> extends RecordStore<R> {
  declare readonly lists: ListBuckets;

  constructor(opts: With<R, 'lists'>) {
    super(opts);
  }
}

export class SearchedRecordStore<R extends OwnedRecord> extends ListedRecordStore<R> {
  declare readonly search: SearchIndex;

  constructor(opts: With<R, 'lists' | 'search'>) {
    super(opts);
  }
}
