// The local store's GIN indexing (local-store-indexes.ts), against the FerretDB over
// PostgreSQL the tests run on: made as FerretDB makes its indexes, used by its filters.
import { MongoClient, type Db } from 'mongodb';
import pg from 'pg';
import { installGinIndexing } from '../scripts/local-store-indexes.ts';
import { waitFor } from '@lpm/test-kit/wait';

const pgDatabase = process.env.LPM_TEST_PG_DATABASE;
const dbName = `${process.env.MONGO_DB_PREFIX}ginidx`;
let client: MongoClient;
let db: Db;
let sql: pg.Client;

// With no PostgreSQL the local store is FerretDB over SQLite, which this does not apply to.
const onPostgres = pgDatabase ? describe : describe.skip;

interface IndexRow {
  indexname: string;
  indexdef: string;
}

async function indexesOf(collection: string): Promise<IndexRow[]> {
  const { rows } = await sql.query<IndexRow>(
    `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename LIKE $2 ORDER BY indexname`,
    [dbName, `${collection}\\_%`],
  );
  return rows;
}

const ginFields = (rows: IndexRow[]) =>
  rows
    .filter((r) => r.indexdef.includes('USING gin'))
    .map((r) => /_jsonb -> '([^']+)'::text/.exec(r.indexdef)![1])
    .sort();

onPostgres('local store GIN indexing', () => {
  beforeAll(async () => {
    client = await MongoClient.connect(process.env.MONGO_URL!);
    db = client.db(dbName);
    const url = new URL(process.env.LPM_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
    url.pathname = `/${pgDatabase}`;
    sql = new pg.Client({ connectionString: url.toString() });
    await sql.connect();
  });

  afterAll(async () => {
    await db.dropDatabase();
    await client.close();
    await sql.end();
  });

  test('when FerretDB creates a collection and its indexes, then each top-level field leading an index gets a GIN index, nested and later keys none', async () => {
    const col = db.collection('ginned');
    await col.insertOne({ _id: 'x' as never, team_id: 't' });
    await col.createIndex({ team_id: 1, created_at: -1 });
    await col.createIndex({ 'address.city': 1 });
    await col.createIndex({ number: 1 }, { unique: true });

    expect(ginFields(await indexesOf('ginned'))).toEqual(['_id', 'number', 'team_id']);
  });

  test('when a record is read by _id, then FerretDB answers through the GIN index', async () => {
    const col = db.collection<{ _id: string; team_id: string }>('served');
    await col.insertMany(Array.from({ length: 500 }, (_, i) => ({ _id: `r${i}`, team_id: `t${i % 5}` })));
    const gin = (await indexesOf('served')).find(
      (r) => r.indexdef.includes('USING gin') && r.indexdef.includes("'_id'"),
    )!;
    const scans = async () =>
      Number(
        (
          await sql.query(`SELECT idx_scan FROM pg_stat_user_indexes WHERE schemaname = $1 AND indexrelname = $2`, [
            dbName,
            gin.indexname,
          ])
        ).rows[0].idx_scan,
      );
    const before = await scans();

    expect(await col.findOne({ _id: 'r321' })).toEqual({ _id: 'r321', team_id: 't1' });
    // PostgreSQL publishes a backend's statistics within seconds of its query.
    await waitFor('a scan of the GIN index', async () => (await scans()) > before);
  });

  test('when the store starts over collections indexed before the trigger existed, then they get their GIN indexes', async () => {
    const col = db.collection('older');
    await col.createIndex({ client_id: 1 });
    for (const row of (await indexesOf('older')).filter((r) => r.indexdef.includes('USING gin'))) {
      await sql.query(`DROP INDEX "${dbName}"."${row.indexname}"`);
    }
    expect(ginFields(await indexesOf('older'))).toEqual([]);

    await installGinIndexing(sql);

    expect(ginFields(await indexesOf('older'))).toEqual(['_id', 'client_id']);
  });
});
