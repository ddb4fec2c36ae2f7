// The recount of a day that took deltas, some 10 s after its last one: teams that stop
// writing together come due together, and their recounts take turns, so they never
// hold every store connection of the service while its writes wait.
import type { Day } from '../src/store/list-counts.ts';
import { DAY_MS } from '../src/time.ts';
import { sleep, waitFor } from '@lpm/test-kit/wait';
import { DAY0, db, listBucketsSuite, lists, type Rec } from './list-buckets-suite.ts';

listBucketsSuite('list_count_rechecks');

test('when ten teams stop writing at once, then each day is counted again, never more than two at a time, and the counts are right', async () => {
  const buckets = lists('rechecked');
  const counts = buckets.counts;
  const recountNow = counts.recountNow.bind(counts);
  let running = 0;
  let most = 0;
  const recounted: string[] = [];
  // Each recount held a while, as a big day's read would take: unpaced, several would overlap.
  counts.recountNow = async (teamId: string, day: Day) => {
    most = Math.max(most, ++running);
    try {
      await recountNow(teamId, day);
      await sleep(1500);
    } finally {
      running--;
      recounted.push(`${teamId}:${day}`);
    }
  };
  const teams = Array.from({ length: 10 }, (_, t) => `team_recheck_${t}`);
  for (const team of teams) {
    const records: Rec[] = [0, 1, 2].map((i) => ({
      _id: `${team}_${i}`,
      team_id: team,
      at: new Date(DAY0 + i),
      status: i === 0 ? 'arquivado' : 'ativo',
      phase: 'a',
    }));
    await db.collection<Rec>('rechecked').insertMany(records.map((r) => ({ ...r, ...buckets.markerOf(r) })));
    for (const r of records) await buckets.added(r, Date.now());
  }

  await waitFor('every team recounted', () => recounted.length >= teams.length, 60_000);
  expect(recounted.sort()).toEqual(teams.map((t) => `${t}:${Math.floor(DAY0 / DAY_MS)}`).sort());
  expect(most).toBe(2);
  const day = Math.floor(DAY0 / DAY_MS);
  for (const team of teams) {
    expect(await counts.days(team, {})).toEqual([{ day, n: 3 }]);
    expect(await counts.days(team, { status: 'ativo' })).toEqual([{ day, n: 2 }]);
  }
});
