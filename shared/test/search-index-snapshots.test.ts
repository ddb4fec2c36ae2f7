// SearchIndex snapshots: a team loaded from the one the last process saved, and when
// it is read whole instead (pages and freshness: search-index.test.ts).
import { type SearchQuery } from '../src/store/search-index.ts';
import { SEARCH_SNAPSHOTS } from '../src/store/search-snapshots.ts';
import { waitFor } from '@lpm/test-kit/wait';
import {
  answer,
  db,
  type Doc,
  expectPlainAnswers,
  finds,
  make,
  partReads,
  plain,
  replica,
  search,
  searchIndexSuite,
  snapshotInserts,
} from './search-index-suite.ts';

searchIndexSuite('search_index_snapshots');

describe('SearchIndex snapshots', () => {
  const q: SearchQuery = { contains: { text: 'acao' }, where: {}, sort: { at: -1, _id: -1 }, skip: 0, limit: 20 };
  const heads = () => db.collection<{ _id: string; snapshot: string; entries: number }>(SEARCH_SNAPSHOTS);
  /** Finds of `team`'s whole set of records (no marker, no id): the read a snapshot spares. */
  const wholeReads = (team: string) => finds.filter((f) => Object.keys(f).length === 1 && f.team_id === team).length;
  const savedWith = (team: string, entries: number) =>
    waitFor(
      `the snapshot of ${team} with ${entries} entries`,
      async () => (await heads().findOne({ _id: `docs:${team}` }))?.entries === entries,
    );

  /** A replica that saved a snapshot of `team`'s 8 records, on a clock the test moves; onClock() starts another on it. */
  async function savedOnClock(team: string) {
    const clock = { now: Date.now() };
    const onClock = () => replica({ clock: () => clock.now, snapshotMinRecords: 0 });
    const first = onClock();
    for (let i = 0; i < 8; i++) await first.insert(make(team, i), []);
    await answer(first, team, q);
    await savedWith(team, 8);
    return { clock, first, onClock };
  }

  it('when a process starts after another read a team, then it answers from the stored snapshot and the slots after it, as the plain query, without reading the team', async () => {
    const team = 'team_snapshot';
    const first = replica({ snapshotMinRecords: 50 });
    for (let i = 0; i < 60; i++) await first.insert(make(team, i), []);
    expect(await answer(first, team, q)).toEqual(await plain(team, q));
    await savedWith(team, 60);
    // Written after the snapshot: a new record, and a change of one the snapshot holds.
    await first.insert(make(team, 600), []);
    const changed = (await db.collection<Doc>('docs').findOne({ team_id: team, text: { $regex: 'acao' } }))!;
    await first.update(team, changed._id, async () => ({
      result: null,
      write: { set: { text: 'no longer found', title: 'zz' }, events: [] },
    }));

    finds.length = 0;
    const restarted = replica();
    await expectPlainAnswers(restarted, team, { needles: 4, others: 3 });
    expect(wholeReads(team)).toBe(0);
    expect(search(restarted).held).toBe(61);
    // A team under the threshold is read whole each time, in well under a second: no snapshot.
    const small = 'team_snapshot_small';
    for (let i = 0; i < 10; i++) await first.insert(make(small, i), []);
    expect(await answer(first, small, q)).toEqual(await plain(small, q));
    expect(snapshotInserts.filter((d) => d.team_id === team).length).toBeGreaterThan(0);
    expect(snapshotInserts.filter((d) => d.team_id === small)).toEqual([]);
    first.search!.stop();
    restarted.search!.stop();
  });

  it('when a process has seen a team written often, then it saves the snapshot unasked and does not hold the team, and a process that starts answers its first search from it without reading the team', async () => {
    const team = 'team_snapshot_ahead';
    const writer = replica({ snapshotMinRecords: 25, snapshotAheadWrites: 50 });
    for (let i = 0; i < 49; i++) await writer.insert(make(team, i), []);
    expect(await heads().findOne({ _id: `docs:${team}` })).toBeNull();
    for (let i = 49; i < 70; i++) await writer.insert(make(team, i), []);
    await waitFor(
      'the snapshot made ahead',
      async () => ((await heads().findOne({ _id: `docs:${team}` }))?.entries ?? 0) >= 49,
    );
    expect(search(writer).held).toBe(0);
    expect(wholeReads(team)).toBe(1);
    // Once asked, never again: more writes read nothing more.
    for (let i = 70; i < 130; i++) await writer.insert(make(team, i), []);
    expect(wholeReads(team)).toBe(1);

    finds.length = 0;
    const started = replica();
    await expectPlainAnswers(started, team, { needles: 3, others: 2 });
    expect(wholeReads(team)).toBe(0);
    expect(search(started).held).toBe(130);
    for (const s of [writer, started]) s.search!.stop();
  });

  it('when a stored snapshot nears the age past which it is not used and nobody searches its team, then refreshSnapshots brings it forward from itself and the slots since, so a search an hour later is answered from it', async () => {
    const team = 'team_snapshot_refresh';
    const { clock, first, onClock } = await savedOnClock(team);
    first.search!.stop();

    // 50 minutes on the snapshot is still used (an hour of slots) but near its end; a record written since.
    clock.now += 50 * 60_000;
    await first.insert(make(team, 8), []);
    finds.length = 0;
    const other = onClock();
    expect(await search(other).refreshSnapshots()).toContain(team);
    expect(wholeReads(team)).toBe(0);
    expect(search(other).held).toBe(0);
    expect((await heads().findOne({ _id: `docs:${team}` }))?.entries).toBe(9);

    // 90 minutes after the first save, which alone would be read no more: the search is
    // answered from the snapshot (its entries are then read again in the background, as
    // every team's are once REBUILD_MS old).
    clock.now += 40 * 60_000;
    partReads.length = 0;
    const later = onClock();
    expect(await answer(later, team, q)).toEqual(await plain(team, q));
    expect(partReads.filter((f) => f.team_id === team).length).toBe(1);
    for (const s of [other, later]) s.search!.stop();
  });

  it('when the stored snapshot is older than the slots it may catch up, or lost a part, then the team is read whole again and saved anew', async () => {
    const team = 'team_snapshot_old';
    const { clock, first, onClock } = await savedOnClock(team);
    const { snapshot } = (await heads().findOne({ _id: `docs:${team}` }))!;

    clock.now += 2 * 3_600_000;
    finds.length = 0;
    const late = onClock();
    expect(await answer(late, team, q)).toEqual(await plain(team, q));
    expect(wholeReads(team)).toBe(1);
    await waitFor(
      'a new snapshot',
      async () => (await heads().findOne({ _id: `docs:${team}` }))?.snapshot !== snapshot,
    );

    await db.collection(SEARCH_SNAPSHOTS).deleteMany({ team_id: team, kind: 'part' });
    finds.length = 0;
    const another = onClock();
    expect(await answer(another, team, q)).toEqual(await plain(team, q));
    expect(wholeReads(team)).toBe(1);
    for (const s of [first, late, another]) s.search!.stop();
  });
});
