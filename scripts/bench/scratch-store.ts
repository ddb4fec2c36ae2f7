// A section's own database on the run's store, opened twice: through the platform's
// store (the entities' indexes made) and through the raw driver, for the section's
// comparisons; dropped once the section is over.
import { MongoClient } from 'mongodb';
import { openStore } from './internals.ts';
import type { Bench } from './support.ts';

type Store = Awaited<ReturnType<typeof openStore>>;

export interface ScratchStore {
  store: Store;
  raw: MongoClient;
  /** Drops the database (if it can) and closes both clients. */
  drop: () => Promise<void>;
}

export async function openScratchStore(
  b: Bench,
  dbName: string,
  entities: Parameters<typeof openStore>[0]['entities'],
): Promise<ScratchStore> {
  const store = await openStore({ url: b.store.url, dbName, entities });
  const raw = await MongoClient.connect(b.store.url);
  return {
    store,
    raw,
    drop: async () => {
      await raw
        .db(dbName)
        .dropDatabase()
        .catch(() => {});
      await raw.close();
      await store.close();
    },
  };
}
