// The store as the tests see it: a client of its own that records the filter of
// every find, update and delete it sends, to check which queries FerretDB can push
// down (a top-level `field: scalar`), and its inserts, to count the writes.
import { MongoClient, type Db, type Document } from 'mongodb';

export interface SentQuery {
  op: 'find' | 'delete' | 'update' | 'insert';
  collection: string;
  /** Empty for an insert. */
  filter: Document;
  /** How many documents an insert carried. */
  documents?: number;
}

export interface WatchedStore {
  db: Db;
  /** The queries sent since the last call. */
  take(): SentQuery[];
  close(): Promise<void>;
}

export async function watchStore(dbName: string): Promise<WatchedStore> {
  const client = await MongoClient.connect(process.env.MONGO_URL!, { monitorCommands: true });
  let sent: SentQuery[] = [];
  client.on('commandStarted', (e) => {
    if (e.commandName === 'find') sent.push({ op: 'find', collection: e.command.find, filter: e.command.filter ?? {} });
    if (e.commandName === 'delete')
      for (const d of e.command.deletes) sent.push({ op: 'delete', collection: e.command.delete, filter: d.q });
    if (e.commandName === 'update')
      for (const u of e.command.updates) sent.push({ op: 'update', collection: e.command.update, filter: u.q });
    if (e.commandName === 'insert')
      sent.push({ op: 'insert', collection: e.command.insert, filter: {}, documents: e.command.documents.length });
  });
  return {
    db: client.db(dbName),
    take: () => {
      const taken = sent;
      sent = [];
      return taken;
    },
    close: () => client.close(),
  };
}

/** Whether the filter names `field` with a plain value at its top level (what FerretDB turns into SQL). */
export const equalityOn = (q: SentQuery, field: string): boolean =>
  ['string', 'number', 'boolean'].includes(typeof q.filter[field]);
