// Counting a webhook's attempts once at a time per webhook, runs a gap apart: requests during a run or its gap return at once and share one run after it.
import { waitFor } from '../../../shared/test/support/wait.ts';
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

test('when requests come within the gap after a run began, then they return at once and share one run, which starts once the gap has passed', async () => {
  const GAP_MS = 300;
  const runs = new CoalescedRuns({ minGapMs: GAP_MS });
  const starts: number[] = [];
  const work = () => (starts.push(performance.now()), Promise.resolve());

  await runs.request('a', work);
  expect(starts).toHaveLength(1);
  // The run is over; the next requests, within its gap, wait for nothing.
  for (let i = 0; i < 5; i++) await runs.request('a', work);
  await runs.request('b', work);
  expect(starts).toHaveLength(2);

  await waitFor('the follow-up run', () => starts.length === 3);
  // One run for the five requests, begun a whole gap after the first (a timer never fires early; a few ms of clock rounding).
  expect(starts[2] - starts[0]).toBeGreaterThanOrEqual(GAP_MS - 5);
  await new Promise((r) => setTimeout(r, 2 * GAP_MS));
  expect(starts).toHaveLength(3);

  // Past its gap with nothing to follow, a key runs at once again.
  await runs.request('a', work);
  expect(starts).toHaveLength(4);
});
