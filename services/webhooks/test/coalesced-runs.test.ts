// Counting a webhook's attempts once at a time per webhook: requests during a run return at once and share one run after it.
import { CoalescedRuns } from '../src/domain/coalesced-runs.ts';

test('when requests come while a run is under way, then they return at once and one more run follows it, and each key runs on its own', async () => {
  const runs = new CoalescedRuns();
  const started: string[] = [];
  let finish: () => void = () => {};
  const work = (key: string) => () => {
    started.push(key);
    return new Promise<void>((r) => (finish = r));
  };

  const first = runs.request('a', work('a'));
  await Promise.resolve();
  await Promise.all([runs.request('a', work('a')), runs.request('a', work('a')), runs.request('a', work('a'))]);
  await runs.request('b', () => (started.push('b'), Promise.resolve()));
  expect(started).toEqual(['a', 'b']);

  finish();
  await first;
  await new Promise((r) => setImmediate(r));
  // The follow-up started once the first was over, one for the three requests.
  expect(started).toEqual(['a', 'b', 'a']);
  finish();
  await new Promise((r) => setImmediate(r));

  // A failed run fails its requester; the next request runs again.
  await expect(runs.request('a', () => Promise.reject(new Error('store down')))).rejects.toThrow('store down');
  await runs.request('a', () => (started.push('a'), Promise.resolve()));
  expect(started).toEqual(['a', 'b', 'a', 'a']);
});
