// Search answered in process (store/search-index.ts): every page and total is the
// plain query's (a regular expression, sorted, skipped and counted by the store) on
// the same records, for texts, filters, sorts and windows, after writes by another
// replica of the record store, with replica clocks apart, and when the store changed
// under a page; a team is read from the store once and then only its recent slots.
import { MongoClient, type CommandStartedEvent, type Db, type Document } from 'mongodb';
import { newId } from '../src/ids.ts';
import { notFound } from '../src/errors.ts';
import { RecordStore } from '../src/store/record-store.ts';
import { IDLE_MS, REBUILD_MS, type SearchIndex, type SearchQuery } from '../src/store/search-index.ts';
import { LATE_WRITE_MS, WRITTEN_SLOT_FIELD } from '../src/store/search-slots.ts';
import { SEARCH_SNAPSHOTS } from '../src/store/search-snapshots.ts';
import type { FieldKind } from '../src/store/search-table.ts';
import { escapeRegex, foldText } from '../src/text.ts';
import { waitFor } from '@lpm/test-kit/wait';

interface Doc {
  _id: string;
  team_id: string;
  version: number;
  /** Folded, as a record's search_text. */
  text: string;
  /** Digits or none, as a client's document_digits. */
  alt: string | null;
  kind: string;
  owner: string | null;
  at: Date | null;
  rank: number;
  title: string;
  missing: number;
  day: string | null;
}

const FIELDS: Record<string, FieldKind> = { kind: 'code', owner: 'code', at: 'time', rank: 'code', title: 'text', missing: 'code', day: 'code' };

let client: MongoClient;
let db: Db;
/** The `find` commands sent to the docs collection by this test's client. */
const finds: Document[] = [];
/** The snapshot parts this test's client stored. */
const snapshotInserts: Document[] = [];
/** The filters of this test's client's reads of snapshot parts. */
const partReads: Document[] = [];

beforeAll(async () => {
  client = await MongoClient.connect(process.env.MONGO_URL!, { monitorCommands: true });
  client.on('commandStarted', (e: CommandStartedEvent) => {
    if (e.commandName === 'find' && e.command.find === 'docs') finds.push(e.command.filter as Document);
    if (e.commandName === 'insert' && e.command.insert === SEARCH_SNAPSHOTS) snapshotInserts.push(...(e.command.documents as Document[]));
    if (e.commandName === 'find' && e.command.find === SEARCH_SNAPSHOTS && (e.command.filter as Document).kind === 'part') partReads.push(e.command.filter as Document);
  });
  db = client.db(`${process.env.MONGO_DB_PREFIX}search_index`);
});

afterAll(async () => {
  await db.dropDatabase();
  await client.close();
});

/** A replica's record store of docs, with search; `clock` is its replica's. */
const replica = (opts: { clock?: () => number; maxRecords?: number; snapshotMinRecords?: number } = {}) =>
  new RecordStore<Doc>({
    db,
    collection: 'docs',
    relay: { kick: () => {} },
    idKind: 'cli',
    noun: 'doc',
    notFound: () => notFound('Doc not found'),
    search: { texts: ['text', 'alt'], fields: FIELDS, ...opts },
  });

const search = (store: RecordStore<Doc>): SearchIndex => store.search!;

// Titles whose order differs between UTF-16 units and code points (an emoji against U+E000-U+FFFF), case, accents, ties.
const TITLES = ['Ação', 'acao', 'Acao', 'ação', 'zeta', '😀 emoji', '\uE000 private', '\uFFFD replacement', 'Émile', 'emile', 'b', 'b', ''];
const WORDS = ['Ação judicial', 'acao civil', 'José Silva', 'jose souza', 'Maria 😀', 'priv \uE000 x', 'Ômega', 'c/c', 'a.b-c'];
const DAY0 = Date.parse('2026-03-01T00:00:00Z');

function make(teamId: string, i: number): Doc {
  return {
    _id: newId('cli'),
    team_id: teamId,
    version: 1,
    text: foldText(`${WORDS[i % WORDS.length]} ${i} | n${i % 7}@mail.example`),
    alt: i % 3 === 0 ? `${100 + (i % 50)}45${i % 9}` : null,
    kind: ['k1', 'k2', 'k3'][i % 3],
    owner: i % 4 === 0 ? null : `o${i % 5}`,
    // Ties at one instant, and some with none.
    at: i % 11 === 0 ? null : new Date(DAY0 + Math.floor(i / 3) * 3_600_000),
    rank: i % 3,
    title: TITLES[i % TITLES.length],
    missing: i % 5 === 0 ? 1 : 0,
    day: i % 5 === 0 ? null : `2026-04-${String(1 + (i % 9)).padStart(2, '0')}`,
  };
}

/** The plain query's page: the store's regular expressions, sort, skip, limit and count. */
async function plain(teamId: string, q: SearchQuery): Promise<{ ids: string[]; total: number }> {
  const or = Object.entries(q.contains).map(([f, needle]) => ({ [f]: new RegExp(escapeRegex(needle)) }));
  const filter = { team_id: teamId, ...q.where, $or: or };
  const col = db.collection<Doc>('docs');
  const ids = (await col.find(filter, { projection: { _id: 1 }, sort: q.sort, skip: q.skip, limit: q.limit }).toArray()).map((d) => d._id);
  return { ids, total: await col.countDocuments(filter) };
}

async function answer(store: RecordStore<Doc>, teamId: string, q: SearchQuery) {
  const page = await search(store).page<Doc>(teamId, q, store.projection());
  return page && { ids: page.records.map((r) => r._id), total: page.total };
}

const NEEDLES: Record<string, string>[] = [
  { text: 'acao' },
  { text: foldText('JOSÉ') },
  { text: '😀' },
  { text: '\uE000' },
  { text: 'c/c' },
  { text: '1' },
  { text: 'nobody' },
  { text: 'a' },
  { text: '1045', alt: '1045' },
];
const WHERES: Record<string, unknown>[] = [
  {},
  { kind: 'k2' },
  { kind: 'k1', owner: 'o2' },
  { owner: 'o9' },
  { at: { $gte: new Date(DAY0 + 5 * 3_600_000), $lt: new Date(DAY0 + 40 * 3_600_000) } },
];
const SORTS: Record<string, 1 | -1>[] = [
  { at: -1, _id: -1 },
  { at: 1, _id: 1 },
  { title: 1, _id: 1 },
  { title: -1, _id: -1 },
  { rank: -1, _id: -1 },
  { missing: 1, day: -1, _id: -1 },
];
const WINDOWS: [number, number][] = [
  [20, 20],
  [7, 3],
  [0, 50],
  [95, 10],
  [1000, 20],
];

/** The index's answer is the plain query's: for every needle, filter and sort on a first page, and every needle, sort and window unfiltered. */
async function expectPlainAnswers(store: RecordStore<Doc>, teamId: string, needles = NEEDLES, wheres = WHERES, sorts = SORTS, windows = WINDOWS) {
  const queries: SearchQuery[] = [];
  for (const contains of needles) {
    for (const sort of sorts) {
      for (const where of wheres) queries.push({ contains, where, sort, skip: 0, limit: 20 });
      for (const [skip, limit] of windows) queries.push({ contains, where: {}, sort, skip, limit });
    }
  }
  for (const q of queries) expect({ q, ...(await answer(store, teamId, q)) }).toEqual({ q, ...(await plain(teamId, q)) });
}

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

  it('when searched by texts, filters, sorts and windows, then each page and total is the plain query page', async () => {
    await expectPlainAnswers(a, team);
  });

  it('when another replica creates and changes records, then the next search of each replica answers as the plain query', async () => {
    const q: SearchQuery = { contains: { text: 'acao' }, where: {}, sort: { at: -1, _id: -1 }, skip: 0, limit: 20 };
    expect(await answer(b, team, q)).toEqual(await plain(team, q));
    const ids = (await db.collection<Doc>('docs').find({ team_id: team }).toArray()).map((d) => d._id);
    for (let i = 0; i < 12; i++) {
      const [writer, reader] = i % 2 ? [a, b] : [b, a];
      if (i % 3 === 0) await writer.insert(make(team, 500 + i), []);
      else {
        // A record stops matching, moves in the order, changes its filtered fields; at once searched from the other replica.
        const set = i % 3 === 1 ? { text: 'renamed', title: 'Ação', kind: 'k3' } : { text: foldText(`Ação nova ${i}`), at: new Date(DAY0 - i), owner: 'o2' };
        await writer.update(team, ids[i], async () => ({ result: null, write: { set, events: [] } }));
      }
      expect({ i, ...(await answer(reader, team, q)) }).toEqual({ i, ...(await plain(team, q)) });
    }
    await expectPlainAnswers(b, team, NEEDLES.slice(0, 3), WHERES.slice(0, 3), SORTS.slice(0, 3), WINDOWS.slice(0, 3));
    await expectPlainAnswers(a, team, NEEDLES.slice(0, 3), WHERES.slice(0, 3), SORTS.slice(0, 3), WINDOWS.slice(0, 3));
  });

  it('when replicas write and search at once, then every search answered after a write finds it', async () => {
    const q = (n: number): SearchQuery => ({ contains: { text: `concurrent ${n}` }, where: {}, sort: { at: -1, _id: -1 }, skip: 0, limit: 5 });
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
    const q = (text: string): SearchQuery => ({ contains: { text }, where: {}, sort: { at: -1, _id: -1 }, skip: 0, limit: 5 });
    expect(await answer(reader, team, q('clock'))).toEqual({ ids: [], total: 0 });
    for (const [name, offset] of [
      ['behind', -(LATE_WRITE_MS - 3000)],
      ['ahead', 4000],
    ] as const) {
      const writer = replica({ clock: () => Date.now() + offset });
      const doc = { ...make(team, 2), text: `clock ${name}` };
      await writer.insert(doc, []);
      expect(await answer(reader, team, q(`clock ${name}`))).toEqual({ ids: [doc._id], total: 1 });
      await writer.update(team, doc._id, async () => ({ result: null, write: { set: { text: `moved ${name}` }, events: [] } }));
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
    expect({ wholeTeam: wholeTeam.length, slotReads: slots.length <= 4 * 4, pageReads: pages.length }).toEqual({ wholeTeam: 0, slotReads: true, pageReads: 4 * 3 });
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

describe('SearchIndex snapshots', () => {
  const q: SearchQuery = { contains: { text: 'acao' }, where: {}, sort: { at: -1, _id: -1 }, skip: 0, limit: 20 };
  const heads = () => db.collection<{ _id: string; snapshot: string; entries: number }>(SEARCH_SNAPSHOTS);
  /** Finds of `team`'s whole set of records (no marker, no id): the read a snapshot spares. */
  const wholeReads = (team: string) => finds.filter((f) => Object.keys(f).length === 1 && f.team_id === team).length;
  const savedWith = (team: string, entries: number) =>
    waitFor(`the snapshot of ${team} with ${entries} entries`, async () => (await heads().findOne({ _id: `docs:${team}` }))?.entries === entries);

  it('when a process starts after another read a team, then it answers from the stored snapshot and the slots after it, as the plain query, without reading the team', async () => {
    const team = 'team_snapshot';
    const first = replica({ snapshotMinRecords: 50 });
    for (let i = 0; i < 60; i++) await first.insert(make(team, i), []);
    expect(await answer(first, team, q)).toEqual(await plain(team, q));
    await savedWith(team, 60);
    // Written after the snapshot: a new record, and a change of one the snapshot holds.
    await first.insert(make(team, 600), []);
    const changed = (await db.collection<Doc>('docs').findOne({ team_id: team, text: { $regex: 'acao' } }))!;
    await first.update(team, changed._id, async () => ({ result: null, write: { set: { text: 'no longer found', title: 'zz' }, events: [] } }));

    finds.length = 0;
    const restarted = replica();
    await expectPlainAnswers(restarted, team, NEEDLES.slice(0, 4), WHERES.slice(0, 3), SORTS.slice(0, 3), WINDOWS.slice(0, 3));
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

  it('when a stored snapshot nears the age past which it is not used and nobody searches its team, then refreshSnapshots brings it forward from itself and the slots since, so a search an hour later is answered from it', async () => {
    const team = 'team_snapshot_refresh';
    let now = Date.now();
    const first = replica({ clock: () => now, snapshotMinRecords: 0 });
    for (let i = 0; i < 8; i++) await first.insert(make(team, i), []);
    await answer(first, team, q);
    await savedWith(team, 8);
    first.search!.stop();

    // 50 minutes on the snapshot is still used (an hour of slots) but near its end; a record written since.
    now += 50 * 60_000;
    await first.insert(make(team, 8), []);
    finds.length = 0;
    const other = replica({ clock: () => now, snapshotMinRecords: 0 });
    expect(await search(other).refreshSnapshots()).toContain(team);
    expect(wholeReads(team)).toBe(0);
    expect(search(other).held).toBe(0);
    expect((await heads().findOne({ _id: `docs:${team}` }))?.entries).toBe(9);

    // 90 minutes after the first save, which alone would be read no more: the search is
    // answered from the snapshot (its entries are then read again in the background, as
    // every team's are once REBUILD_MS old).
    now += 40 * 60_000;
    partReads.length = 0;
    const later = replica({ clock: () => now, snapshotMinRecords: 0 });
    expect(await answer(later, team, q)).toEqual(await plain(team, q));
    expect(partReads.filter((f) => f.team_id === team).length).toBe(1);
    for (const s of [other, later]) s.search!.stop();
  });

  it('when the stored snapshot is older than the slots it may catch up, or lost a part, then the team is read whole again and saved anew', async () => {
    const team = 'team_snapshot_old';
    let now = Date.now();
    const first = replica({ clock: () => now, snapshotMinRecords: 0 });
    for (let i = 0; i < 8; i++) await first.insert(make(team, i), []);
    await answer(first, team, q);
    await savedWith(team, 8);
    const { snapshot } = (await heads().findOne({ _id: `docs:${team}` }))!;

    now += 2 * 3_600_000;
    finds.length = 0;
    const late = replica({ clock: () => now, snapshotMinRecords: 0 });
    expect(await answer(late, team, q)).toEqual(await plain(team, q));
    expect(wholeReads(team)).toBe(1);
    await waitFor('a new snapshot', async () => (await heads().findOne({ _id: `docs:${team}` }))?.snapshot !== snapshot);

    await db.collection(SEARCH_SNAPSHOTS).deleteMany({ team_id: team, kind: 'part' });
    finds.length = 0;
    const another = replica({ clock: () => now, snapshotMinRecords: 0 });
    expect(await answer(another, team, q)).toEqual(await plain(team, q));
    expect(wholeReads(team)).toBe(1);
    for (const s of [first, late, another]) s.search!.stop();
  });
});
