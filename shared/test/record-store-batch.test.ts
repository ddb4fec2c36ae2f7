// RecordStore.updateReads: many records written under locks taken together, each
// decided on its read, or on the record as it is now when that read is stale; a
// record whose lock someone holds waits for it; one deleted since its read is null.
import { MongoClient, type Db } from 'mongodb';
import { newId } from '../src/ids.ts';
import { tryDocumentLock } from '../src/store/lock.ts';
import type { RecordStore } from '../src/store/record-store.ts';
import { notesStore, type Note } from './support/notes-store.ts';

let client: MongoClient;
let db: Db;
let notes: RecordStore<Note>;

beforeAll(async () => {
  client = await MongoClient.connect(process.env.MONGO_URL!);
  db = client.db(`${process.env.MONGO_DB_PREFIX}record_batch`);
  notes = notesStore(db);
});

afterAll(async () => {
  await db.dropDatabase();
  await client.close();
});

const append = async (current: Note) => ({ result: current.text, write: { set: { text: `${current.text}!` }, events: [] } });

test('when some reads are stale, one record is locked by another and one is deleted, then each is written once on what it is now, in order', async () => {
  const made: Note[] = Array.from({ length: 6 }, (_, i) => ({ _id: newId('cli'), team_id: 'team_1', version: 1, text: `n${i}` }));
  for (const n of made) await notes.insert(n, []);
  const reads = await notes.readAfter('team_1', {}, null, 10);
  expect(reads.map((r) => r._id)).toEqual(made.map((n) => n._id).sort());
  // After the read: note 1 changed by another writer, note 2 deleted, note 3's lock held for a moment.
  const byId = (id: string) => reads.findIndex((r) => r._id === id);
  await notes.update('team_1', made[1]._id, async () => ({ result: null, write: { set: { text: 'changed' }, events: [] } }));
  await db.collection('notes').deleteOne({ _id: made[2]._id } as never);
  const held = (await tryDocumentLock(db, 'notes', made[3]._id))!;
  setTimeout(() => void held.release(), 300);

  const { results, failed } = await notes.updateReads(reads, append);
  expect(failed).toBeUndefined();
  const expected = reads.map((r) => (r._id === made[1]._id ? 'changed' : r._id === made[2]._id ? null : r.text));
  expect(results).toEqual(expected);
  expect(results[byId(made[3]._id)]).toBe('n3');
  const stored = new Map((await db.collection<Note>('notes').find({ team_id: 'team_1' }).toArray()).map((n) => [n._id, [n.text, n.version]]));
  expect(stored).toEqual(new Map(made.filter((_, i) => i !== 2).map((n) => [n._id, n === made[1] ? ['changed!', 3] : [`${n.text}!`, 2]])));
});

test('when a record fails part way through a batch, then the batch stops, reports the error, and what it wrote stands', async () => {
  const made: Note[] = Array.from({ length: 4 }, (_, i) => ({ _id: newId('cli'), team_id: 'team_2', version: 1, text: `m${i}` }));
  for (const n of made) await notes.insert(n, []);
  const reads = await notes.readAfter('team_2', {}, null, 10);
  const { results, failed } = await notes.updateReads(reads, async (current) => {
    if (current.text === 'm2') throw new Error('cannot decide');
    return append(current);
  });
  expect(failed).toMatchObject({ message: 'cannot decide' });
  const written = (await db.collection<Note>('notes').find({ team_id: 'team_2', version: 2 }).toArray()).map((n) => n.text);
  expect(written.sort()).toEqual(results.filter((r): r is string => r !== null).map((t) => `${t}!`).sort());
  expect(written).not.toContain('m2!');
});
