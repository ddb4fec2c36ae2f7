// A document-lock holder whose store stalls past the lease must not
// write: by then another holder may have the lock. A record update whose read (or
// decision) took longer than DOCUMENT_LOCK_MS answers 503 and leaves the record as
// it was; another writer that took the lock after the lease ran out keeps its write.
import type { Db } from 'mongodb';
import { newId } from '../src/ids.ts';
import type { AppError } from '../src/errors.ts';
import { DOCUMENT_LOCK_MS } from '../src/store/lock.ts';
import type { RecordStore } from '../src/store/record-store.ts';
import { notesStore, type Note } from '@lpm/test-kit/notes-store';
import { sleep } from '@lpm/test-kit/wait';
import { scratchDatabase } from '@lpm/test-kit/scratch-database';

let db: Db;
let notes: RecordStore<Note>;

scratchDatabase('lock_lease', (opened) => {
  db = opened;
  notes = notesStore(db);
});

test('when a holder stalls past the lease before its write, then it writes nothing (503) and the writer after it keeps its change', async () => {
  const note: Note = { _id: newId('cli'), team_id: 'team_1', version: 1, text: 'first' };
  await notes.insert(note, []);

  const stalled = notes.update('team_1', note._id, async (current) => {
    await sleep(DOCUMENT_LOCK_MS + 300); // a store that stalled while the lock was held
    return { result: 'stalled', write: { set: { text: `${current.text} + stalled` }, events: [] } };
  });
  const refused = stalled.then(
    () => null,
    (e: AppError) => e,
  );
  // The lease has run out: another writer gets the lock (its slots expired) and writes.
  await sleep(DOCUMENT_LOCK_MS * 2 + 100);
  await expect(
    notes.update('team_1', note._id, async () => ({ result: 'next', write: { set: { text: 'next' }, events: [] } })),
  ).resolves.toBe('next');

  const err = await refused;
  expect(err).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE', message: 'The record is busy; retry' });
  expect(await notes.get('team_1', note._id)).toMatchObject({ text: 'next', version: 2 });
}, 30_000);

test('when a holder writes within the lease, then its write goes in', async () => {
  const note: Note = { _id: newId('cli'), team_id: 'team_1', version: 1, text: 'first' };
  await notes.insert(note, []);
  await notes.update('team_1', note._id, async () => ({
    result: null,
    write: { set: { text: 'second' }, events: [] },
  }));
  expect(await notes.get('team_1', note._id)).toMatchObject({ text: 'second', version: 2 });
});
