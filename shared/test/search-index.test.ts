// SearchIndex: pages answered in process are the plain query's, and fresh across
// replicas (snapshots: search-index-snapshots.test.ts).
import { RecordStore } from '../src/store/record-store.ts';
import { IDLE_MS, REBUILD_MS, type SearchQuery } from '../src/store/search-index.ts';
import { LATE_WRITE_MS, WRITTEN_SLOT_FIELD } from '../src/store/search-slots.ts';
import { foldText } from '../src/text.ts';
import { waitFor } from '@lpm/test-kit/wait';
import {
  answer,
  DAY0,
  db,
  type Doc,
  expectPlainAnswers,
  finds,
  make,
  plain,
  replica,
  search,
  searchIndexSuite,
} from './search-index-suite.ts';

searchIndexSuite('search_index');

describe('SearchIndex.page', () => {
  const team = 'team_pages';
  let a: RecordStore<Doc>;
  let b: RecordStore<Doc>;

  beforeAll(async () => {
    a = replica();
    b = replica();
    for (let i = 0; i < 160; i++) await a.insert(make(team, i), []);
    // Another team's records under the same texts are never found.
    for (let i = 0; i < 20; i++) await b.insert(make('team_other', i), []);
  });

  // The whole grid, each answer against the plain query: about 25 s alone, over a minute in a busy whole run.
  it('when searched by texts, filters, sorts and windows, then each page and total is the plain query page', async () => {
    await expectPlainAnswers(a, team);
  }, 240_000);

  it('when another replica creates and changes records, then the next search of each replica answers as the plain query', async () => {
    const q: SearchQuery = { contains: { text: 'acao' }, where: {}, sort: { at: -1, _id: -1 }, skip: 0, limit: 20 };
    expect(await answer(b, team, q)).toEqual(await plain(team, q));
    const ids = (await db.collection<Doc>('docs').find({ team_id: team }).toArray()).map((d) => d._id);
    for (let i = 0; i < 12; i++) {
      const [writer, reader] = i % 2 ? [a, b] : [b, a];
      if (i % 3 === 0) await writer.insert(make(team, 500 + i), []);
      else {
        // A record stops matching, moves in the order, changes its filtered fields; at once searched from the other replica.
        const set =
          i % 3 === 1
            ? { text: 'renamed', title: 'Ação', kind: 'k3' }
            : { text: foldText(`Ação nova ${i}`), at: new Date(DAY0 - i), owner: 'o2' };
        await writer.update(team, ids[i], async () => ({ result: null, write: { set, events: [] } }));
      }
      expect({ i, ...(await answer(reader, team, q)) }).toEqual({ i, ...(await plain(team, q)) });
    }
    for (const store of [b, a]) await expectPlainAnswers(store, team, { needles: 3, others: 3 });
  });

  it('when replicas write and search at once, then every search answered after a write finds it', async () => {
    const q = (n: number): SearchQuery => ({
      contains: { text: `concurrent ${n}` },
      where: {},
      sort: { at: -1, _id: -1 },
      skip: 0,
      limit: 5,
    });
    await Promise.all(
      Array.from({ length: 10 }, async (_, n) => {
        const doc = { ...make(team, 900 + n), text: `concurrent ${n}` };
        await (n % 2 ? a : b).insert(doc, []);
        expect(await answer(n % 2 ? b : a, team, q(n))).toEqual({ ids: [doc._id], total: 1 });
      }),
    );
  });

  it('when a record is deleted from the store under a page, then the page leaves it out and its total counts it no more', async () => {
    const q: SearchQuery = { contains: { text: 'josé' }, where: {}, sort: { at: -1, _id: -1 }, skip: 0, limit: 10 };
    q.contains.text = foldText(q.contains.text);
    const first = (await answer(a, team, q))!;
    await db.collection<Doc>('docs').deleteOne({ _id: first.ids[1] });
    expect(await answer(a, team, q)).toEqual(await plain(team, q));
  });
});

describe('SearchIndex freshness', () => {
  it('when a writer stamps its write in an earlier slot (a slow write, a clock behind) or a later one (a clock ahead), then the next search finds it', async () => {
    const team = 'team_clocks';
    const reader = replica();
    await reader.insert(make(team, 1), []);
    const q = (text: string): SearchQuery => ({
      contains: { text },
      where: {},
      sort: { at: -1, _id: -1 },
      skip: 0,
      limit: 5,
    });
    expect(await answer(reader, team, q('clock'))).toEqual({ ids: [], total: 0 });
    for (const [name, offset] of [
      ['behind', -(LATE_WRITE_MS - 3000)],
      ['ahead', 4000],
    ] as const) {
      const writer = replica({ clock: () => Date.now() + offset });
      const doc = { ...make(team, 2), text: `clock ${name}` };
      await writer.insert(doc, []);
      expect(await answer(reader, team, q(`clock ${name}`))).toEqual({ ids: [doc._id], total: 1 });
      await writer.update(team, doc._id, async () => ({
        result: null,
        write: { set: { text: `moved ${name}` }, events: [] },
      }));
      expect(await answer(reader, team, q(`clock ${name}`))).toEqual({ ids: [], total: 0 });
    }
  });

  it('when a team is searched again, then it is not read again: only its unsettled slots and the page are', async () => {
    const team = 'team_reads';
    const store = replica();
    for (let i = 0; i < 30; i++) await store.insert(make(team, i), []);
    const q: SearchQuery = { contains: { text: 'acao' }, where: {}, sort: { at: -1, _id: -1 }, skip: 0, limit: 3 };
    await answer(store, team, q);
    finds.length = 0;
    for (let n = 0; n < 4; n++) expect(await answer(store, team, q)).toEqual(await plain(team, q));
    const mine = finds.filter((f) => JSON.stringify(f).includes(team));
    const wholeTeam = mine.filter((f) => Object.keys(f).length === 1 && f.team_id === team);
    const slots = mine.filter((f) => WRITTEN_SLOT_FIELD in f);
    const pages = mine.filter((f) => '_id' in f && !('$or' in f));
    // From 15 s before the last read to 5 s ahead of now, in slots of 10 s: three, or four when a search crosses a slot's end.
    expect({ wholeTeam: wholeTeam.length, slotReads: slots.length <= 4 * 4, pageReads: pages.length }).toEqual({
      wholeTeam: 0,
      slotReads: true,
      pageReads: 4 * 3,
    });
  });

  it('when a record is written without its marker (a direct driver write), then it is found once the team is read again, REBUILD_MS later', async () => {
    const team = 'team_rebuild';
    let now = Date.now();
    const store = replica({ clock: () => now });
    await store.insert(make(team, 3), []);
    const q: SearchQuery = { contains: { text: 'unmarked' }, where: {}, sort: { at: -1, _id: -1 }, skip: 0, limit: 5 };
    expect(await answer(store, team, q)).toEqual({ ids: [], total: 0 });
    const doc = { ...make(team, 4), text: 'unmarked' };
    await db.collection<Doc>('docs').insertOne(doc);
    expect(await answer(store, team, q)).toEqual({ ids: [], total: 0 });
    // Searched every 10 minutes meanwhile: the read again runs beside the searches, which use the entries held until it is done.
    for (let minutes = 10; minutes <= REBUILD_MS / 60_000; minutes += 10) {
      now += 10 * 60_000;
      expect(await answer(store, team, q)).toEqual({ ids: [], total: 0 });
    }
    now += 1;
    await waitFor('the unmarked record found', async () => (await answer(store, team, q))!.total === 1);
  });

  it('when a team is not searched for IDLE_MS, then its entries are dropped, and its next search reads it again', async () => {
    const team = 'team_idle';
    let now = Date.now();
    const store = replica({ clock: () => now });
    for (let i = 0; i < 5; i++) await store.insert(make(team, i), []);
    const q: SearchQuery = { contains: { text: 'acao' }, where: {}, sort: { at: -1, _id: -1 }, skip: 0, limit: 5 };
    await answer(store, team, q);
    expect(search(store).held).toBe(5);
    now += IDLE_MS + 1;
    search(store).dropIdle();
    expect(search(store).held).toBe(0);
    expect(await answer(store, team, q)).toEqual(await plain(team, q));
    search(store).stop();
  });

  it('when a team holds more records than a process may hold, then its search is left to the plain query (null) and nothing is held', async () => {
    const team = 'team_big';
    const store = replica({ maxRecords: 10 });
    for (let i = 0; i < 12; i++) await store.insert(make(team, i), []);
    const small = 'team_small';
    for (let i = 0; i < 4; i++) await store.insert(make(small, i), []);
    const q: SearchQuery = { contains: { text: 'acao' }, where: {}, sort: { at: -1, _id: -1 }, skip: 0, limit: 5 };
    expect(await answer(store, small, q)).toEqual(await plain(small, q));
    expect(await search(store).page(team, q, {})).toBeNull();
    expect(search(store).held).toBe(4);
  });
});
