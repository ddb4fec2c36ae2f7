// A RecordStore of small notes on a database of its own, for the store layer's tests.
import type { Db } from 'mongodb';
import { notFound } from '@lpm/shared/errors';
import { RecordStore } from '@lpm/shared/store/record-store';
import { NO_RELAY } from './service-parts.ts';

export interface Note {
  _id: string;
  team_id: string;
  version: number;
  text: string;
}

/** Notes in `db`'s `notes` collection; their events go nowhere. */
export const notesStore = (db: Db): RecordStore<Note> =>
  new RecordStore<Note>({
    db,
    collection: 'notes',
    relay: NO_RELAY,
    idKind: 'cli',
    noun: 'note',
    notFound: () => notFound('Note not found'),
  });
