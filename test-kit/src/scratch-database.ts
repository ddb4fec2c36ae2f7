// A database of the suite's own on the run's store, for tests of the shared store code.
import { MongoClient, type Db } from 'mongodb';

/**
 * Opens `${MONGO_DB_PREFIX}${name}` before the suite's tests and hands it to `ready`
 * (which may set up more on it); drops it and closes the connection after them.
 */
export function scratchDatabase(name: string, ready: (db: Db) => unknown): void {
  let client: MongoClient | undefined;
  let db: Db | undefined;
  beforeAll(async () => {
    client = await MongoClient.connect(process.env.MONGO_URL!);
    db = client.db(`${process.env.MONGO_DB_PREFIX}${name}`);
    await ready(db);
  });
  afterAll(async () => {
    await db?.dropDatabase();
    await client?.close();
  });
}
