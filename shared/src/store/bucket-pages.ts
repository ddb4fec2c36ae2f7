// A page of a list stored in buckets whose sizes are counted (list-buckets.ts, the
// webhooks' delivery log): whole buckets before the page are skipped by their counts,
// then the buckets the page falls in are read one after another until it is full. A
// count a concurrent write made stale only moves the page's edge: a bucket that holds
// fewer records than counted lets the next one fill the page.

/** `buckets` in the page's order with their counts; `read` gives a bucket's records from `skip`, at most `limit`. */
export async function readBucketPage<B, R>(
  buckets: readonly B[],
  countOf: (bucket: B) => number,
  window: { skip: number; limit: number },
  read: (bucket: B, skip: number, limit: number) => Promise<R[]>,
): Promise<R[]> {
  let i = 0;
  let offset = window.skip;
  while (i < buckets.length && offset >= countOf(buckets[i])) offset -= countOf(buckets[i++]);
  const records: R[] = [];
  for (; i < buckets.length && records.length < window.limit; i++, offset = 0) {
    records.push(...(await read(buckets[i], offset, window.limit - records.length)));
  }
  return records;
}
