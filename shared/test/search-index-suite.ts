// Records of teams with texts, codes and times on a scratch database, replicas of
// their record store with search, and the plain query's answers, for the files of
// search-index*.test.ts. Bindings are exported live: the suite sets them.
import { MongoClient, type CommandStartedEvent, type Db, type Document } from 'mongodb';
import { newId } from '../src/ids.ts';
import { notFound } from '../src/errors.ts';
import { RecordStore } from '../src/store/record-store.ts';
import { type SearchIndex, type SearchQuery } from '../src/store/search-index.ts';
import { SEARCH_SNAPSHOTS } from '../src/store/search-snapshots.ts';
import type { FieldKind } from '../src/store/search-table.ts';
import { escapeRegex, foldText } from '../src/text.ts';
import { NO_RELAY } from '@lpm/test-kit/service-parts';

export interface Doc {
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

export const FIELDS: Record<string, FieldKind> = {
  kind: 'code',
  owner: 'code',
  at: 'time',
  rank: 'code',
  title: 'text',
  missing: 'code',
  day: 'code',
};

export let client: MongoClient;
export let db: Db;
/** The `find` commands sent to the docs collection by this test's client. */
export const finds: Document[] = [];
/** The snapshot parts this test's client stored. */
export const snapshotInserts: Document[] = [];
/** The filters of this file's client's reads of snapshot parts. */
export const partReads: Document[] = [];

/** A replica's record store of docs, with search; `clock` is its replica's. */
export const replica = (
  opts: { clock?: () => number; maxRecords?: number; snapshotMinRecords?: number; snapshotAheadWrites?: number } = {},
) =>
  new RecordStore<Doc>({
    db,
    collection: 'docs',
    relay: NO_RELAY,
    idKind: 'cli',
    noun: 'doc',
    notFound: () => notFound('Doc not found'),
    search: { texts: ['text', 'alt'], fields: FIELDS, ...opts },
  });

export const search = (store: RecordStore<Doc>): SearchIndex => store.search!;

// Titles whose order differs between UTF-16 units and code points (an emoji against U+E000-U+FFFF), case, accents, ties.
export const TITLES = [
  'Ação',
  'acao',
  'Acao',
  'ação',
  'zeta',
  '😀 emoji',
  '\uE000 private',
  '\uFFFD replacement',
  'Émile',
  'emile',
  'b',
  'b',
  '',
];
export const WORDS = [
  'Ação judicial',
  'acao civil',
  'José Silva',
  'jose souza',
  'Maria 😀',
  'priv \uE000 x',
  'Ômega',
  'c/c',
  'a.b-c',
];
export const DAY0 = Date.parse('2026-03-01T00:00:00Z');

export function make(teamId: string, i: number): Doc {
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
export async function plain(teamId: string, q: SearchQuery): Promise<{ ids: string[]; total: number }> {
  const or = Object.entries(q.contains).map(([f, needle]) => ({ [f]: new RegExp(escapeRegex(needle)) }));
  const filter = { team_id: teamId, ...q.where, $or: or };
  const col = db.collection<Doc>('docs');
  const ids = (
    await col.find(filter, { projection: { _id: 1 }, sort: q.sort, skip: q.skip, limit: q.limit }).toArray()
  ).map((d) => d._id);
  return { ids, total: await col.countDocuments(filter) };
}

export async function answer(store: RecordStore<Doc>, teamId: string, q: SearchQuery) {
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

/**
 * The index's answer is the plain query's: for every needle, filter and sort on a first
 * page, and every needle, sort and window unfiltered. With `firsts`, only the first
 * `needles` needles and the first `others` filters, sorts and windows.
 */
export async function expectPlainAnswers(
  store: RecordStore<Doc>,
  teamId: string,
  firsts?: { needles: number; others: number },
) {
  const others = firsts?.others;
  const queries: SearchQuery[] = [];
  for (const contains of NEEDLES.slice(0, firsts?.needles)) {
    for (const sort of SORTS.slice(0, others)) {
      for (const where of WHERES.slice(0, others)) queries.push({ contains, where, sort, skip: 0, limit: 20 });
      for (const [skip, limit] of WINDOWS.slice(0, others)) queries.push({ contains, where: {}, sort, skip, limit });
    }
  }
  for (const q of queries)
    expect({ q, ...(await answer(store, teamId, q)) }).toEqual({ q, ...(await plain(teamId, q)) });
}

/** A scratch database `name` for the file, on a client that notes the finds of docs and the snapshot parts it stores. */
export function searchIndexSuite(name: string): void {
  beforeAll(async () => {
    client = await MongoClient.connect(process.env.MONGO_URL!, { monitorCommands: true });
    client.on('commandStarted', (e: CommandStartedEvent) => {
      if (e.commandName === 'find' && e.command.find === 'docs') finds.push(e.command.filter as Document);
      if (e.commandName === 'insert' && e.command.insert === SEARCH_SNAPSHOTS)
        snapshotInserts.push(...(e.command.documents as Document[]));
      if (
        e.commandName === 'find' &&
        e.command.find === SEARCH_SNAPSHOTS &&
        (e.command.filter as Document).kind === 'part'
      )
        partReads.push(e.command.filter as Document);
    });
    db = client.db(`${process.env.MONGO_DB_PREFIX}${name}`);
  });
  afterAll(async () => {
    await db.dropDatabase();
    await client.close();
  });
}
