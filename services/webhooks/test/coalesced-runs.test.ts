// Counting a webhook's attempts once at a time per webhook: calls during a run share the one after it.
import { CoalescedRuns } from '../src/domain/coalesced-runs.ts';

test('when calls come while a run is under way, then they share one run that starts after them, and each key runs on its own', async () => {
  const runs = new CoalescedRuns();
  const started: string[] = [];
  let finish: () => void = () => {};
  const work = (key: string) => () => {
    started.push(key);
    return new Promise<void>((r) => (finish = r));
  };

  const first = runs.run('a', work('a'));
  await Promise.resolve();
  const later = [runs.run('a', work('a')), runs.run('a', work('a')), runs.run('a', work('a'))];
  const other = runs.run('b', () => (started.push('b'), Promise.resolve()));
  await other;
  expect(started).toEqual(['a', 'b']);

  finish();
  await first;
  await new Promise((r) => setImmediate(r));
  // The queued run started once the first was over, for all three calls.
  expect(started).toEqual(['a', 'b', 'a']);
  finish();
  await Promise.all(later);
  expect(started).toEqual(['a', 'b', 'a']);

  // A failed run fails its callers; the next call runs again.
  await expect(runs.run('a', () => Promise.reject(new Error('store down')))).rejects.toThrow('store down');
  await runs.run('a', () => (started.push('a'), Promise.resolve()));
  expect(started).toEqual(['a', 'b', 'a', 'a']);
});
