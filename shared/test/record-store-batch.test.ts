// RecordStore.updateReads: many records written under locks taken together, each
// decided on its read, or on the record as it is now when that read is stale; a
// record whose lock someone holds waits for it; one deleted since its read is null;
// with a run's mark, each record done carries it and a read for the rest skips it.
import type { Db } from 'mongodb';
import { newId } from '../src/ids.ts';
import { tryDocumentLock } from '../src/store/lock.ts';
import type { RecordStore } from '../src/store/record-store.ts';
import { notesStore, type Note } from '@lpm/test-kit/notes-store';
import { scratchDatabase } from '@lpm/test-kit/scratch-database';

let db: Db;
let notes: RecordStore<Note>;

scratchDatabase('record_batch', (opened) => {
  db = opened;
  notes = notesStore(db);
});

const byIdOrder = (records: Note[]) => [...records].sort((a, b) => (a._id < b._id ? -1 : 1));
const MARK = { sync_notes: '2026-11-29T06:00:00.000Z' };

/** `count` notes of `teamId` stored, at version 1, their texts `prefix` and their number. */
async function insertNotes(teamId: string, count: number, prefix: string): Promise<Note[]> {
  const made = Array.from({ length: count }, (_, i) => ({
    _id: newId('cli'),
    team_id: teamId,
    version: 1,
    text: `${prefix}${i}`,
  }));
  for (const n of made) await notes.insert(n, []);
  return made;
}

const append = async (current: Note) => ({
  result: current.text,
  write: { set: { text: `${current.text}!` }, events: [] },
});

test('when some reads are stale, one record is locked by another and one is deleted, then each is written once on what it is now, in order', async () => {
  const made = await insertNotes('team_1', 6, 'n');
  const reads = byIdOrder(await notes.readUnmarked('team_1', {}, MARK, 10));
  expect(reads.map((r) => r._id)).toEqual(made.map((n) => n._id).sort());
  // After the read: note 1 changed by another writer, note 2 deleted, note 3's lock held for a moment.
  const byId = (id: string) => reads.findIndex((r) => r._id === id);
  await notes.update('team_1', made[1]._id, async () => ({
    result: null,
    write: { set: { text: 'changed' }, events: [] },
  }));
  await db.collection('notes').deleteOne({ _id: made[2]._id } as never);
  const held = (await tryDocumentLock(db, 'notes', made[3]._id))!;
  setTimeout(() => void held.release(), 300);

  const { results, failed } = await notes.updateReads(reads, append);
  expect(failed).toBeUndefined();
  const expected = reads.map((r) => (r._id === made[1]._id ? 'changed' : r._id === made[2]._id ? null : r.text));
  expect(results).toEqual(expected);
  expect(results[byId(made[3]._id)]).toBe('n3');
  const stored = new Map(
    (await db.collection<Note>('notes').find({ team_id: 'team_1' }).toArray()).map((n) => [n._id, [n.text, n.version]]),
  );
  expect(stored).toEqual(
    new Map(made.filter((_, i) => i !== 2).map((n) => [n._id, n === made[1] ? ['changed!', 3] : [`${n.text}!`, 2]])),
  );
});

test('when a record fails part way through a batch, then the batch stops, reports the error, and what it wrote stands', async () => {
  await insertNotes('team_2', 4, 'm');
  const reads = await notes.readUnmarked('team_2', {}, MARK, 10);
  const { results, failed } = await notes.updateReads(
    reads,
    async (current) => {
      if (current.text === 'm2') throw new Error('cannot decide');
      return append(current);
    },
    MARK,
  );
  expect(failed).toMatchObject({ message: 'cannot decide' });
  const written = (await db.collection<Note>('notes').find({ team_id: 'team_2', version: 2 }).toArray()).map(
    (n) => n.text,
  );
  expect(written.sort()).toEqual(
    results
      .filter((r): r is string => r !== null)
      .map((t) => `${t}!`)
      .sort(),
  );
  expect(written).not.toContain('m2!');
});

test('when a batch runs with a mark, then each record done carries it, in its own write or, written nothing, without a new version, and a read for that mark skips them', async () => {
  const made = await insertNotes('team_3', 6, 'k');
  await notes.insert({ _id: newId('cli'), team_id: 'team_other', version: 1, text: 'other' }, []);
  expect(await notes.readUnmarked('team_3', {}, MARK, 4)).toHaveLength(4);
  const reads = await notes.readUnmarked('team_3', {}, MARK, 10);
  expect(byIdOrder(reads).map((r) => r._id)).toEqual(byIdOrder(made).map((n) => n._id));
  await db.collection('notes').deleteOne({ _id: made[5]._id } as never);
  // Even-numbered notes are written, odd ones are right as they are.
  const { failed } = await notes.updateReads(
    reads,
    async (current) => (Number(current.text.slice(1)) % 2 === 0 ? append(current) : { result: current.text }),
    MARK,
  );
  expect(failed).toBeUndefined();
  const stored = await db
    .collection<Note & { sync_notes?: string }>('notes')
    .find({ team_id: 'team_3' })
    .sort({ text: 1 })
    .toArray();
  expect(stored.map((n) => [n.text, n.version, n.sync_notes])).toEqual([
    ['k0!', 2, MARK.sync_notes],
    ['k1', 1, MARK.sync_notes],
    ['k2!', 2, MARK.sync_notes],
    ['k3', 1, MARK.sync_notes],
    ['k4!', 2, MARK.sync_notes],
  ]);
  expect(await notes.readUnmarked('team_3', {}, MARK, 10)).toEqual([]);
  // A later run's mark: every record is left again, and another team's never.
  const later = { sync_notes: '2026-11-29T07:00:00.000Z' };
  expect((await notes.readUnmarked('team_3', {}, later, 10)).map((n) => n.text).sort()).toEqual([
    'k0!',
    'k1',
    'k2!',
    'k3',
    'k4!',
  ]);
});

test('when a batch with a mark fails part way, then the records it did not do stay unmarked for the next read', async () => {
  await insertNotes('team_4', 4, 'j');
  const reads = byIdOrder(await notes.readUnmarked('team_4', {}, MARK, 10));
  const { failed } = await notes.updateReads(
    reads,
    async (current) => {
      if (current._id === reads[2]._id) throw new Error('cannot decide');
      return { result: current.text };
    },
    MARK,
  );
  expect(failed).toMatchObject({ message: 'cannot decide' });
  const left = (await notes.readUnmarked('team_4', {}, MARK, 10)).map((n) => n._id);
  expect(left).toContain(reads[2]._id);
  expect(left).not.toContain(reads[0]._id);
});
