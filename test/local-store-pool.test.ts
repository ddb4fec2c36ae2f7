// The local store's client bound (local-store.ts): FerretDB 1.24 wedges when as many
// updates run at once as its PostgreSQL pool has connections, so each process's
// driver keeps few enough connections (its share, under `npm start`) that the
// gateway, six services and an operator CLI, all updating at once, cannot get
// there. Runs on a FerretDB of its own: a wedge would stop the store every other
// test uses.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import {
  dropPostgresDatabase,
  LOCAL_STORE_CLIENT_CONNECTIONS,
  LOCAL_STORE_CONNECTIONS,
  localStoreUrl,
  startFerretdb,
  type RunningStore,
} from '../scripts/local-store.ts';
import { SERVICE_NAMES } from '../shared/src/service/names.ts';

/** `npm start`'s processes, each with its share of connections, and a CLI with the default. */
const SHARES = [...Object.values(LOCAL_STORE_CONNECTIONS), LOCAL_STORE_CLIENT_CONNECTIONS];
const UPDATES_PER_CLIENT = 40;
const onPostgres = process.env.LPM_TEST_PG_DATABASE ? describe : describe.skip;

onPostgres('local store client bound', () => {
  const database = `${process.env.LPM_TEST_PG_DATABASE}_pool`;
  const dir = mkdtempSync(join(tmpdir(), 'lpm-pool-'));
  let store: RunningStore;
  const clients: MongoClient[] = [];

  beforeAll(async () => {
    store = await startFerretdb({ dataDir: dir, database });
    for (const share of SHARES) clients.push(await MongoClient.connect(localStoreUrl(store.port, share)));
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close(true)));
    await store.stop();
    await dropPostgresDatabase(database);
    rmSync(dir, { recursive: true, force: true });
  });

  test("the local store URL bounds the driver pool, and the shares of the system and a CLI stay under FerretDB's 50 connections", () => {
    expect(new URL(store.url).searchParams.get('maxPoolSize')).toBe(String(LOCAL_STORE_CLIENT_CONNECTIONS));
    expect(clients.map((c) => c.options.maxPoolSize)).toEqual(SHARES);
    expect(Object.keys(LOCAL_STORE_CONNECTIONS).sort()).toEqual(['gateway', ...SERVICE_NAMES].sort());
    expect(SHARES.reduce((sum, n) => sum + n, 0)).toBeLessThan(50);
  });

  test("when the system's seven processes and a CLI each fire 40 updates at once, then every update completes and the store still answers", async () => {
    const total = clients.length * UPDATES_PER_CLIENT;
    const col = (i: number) => clients[i].db('pool').collection<{ _id: string; n: number }>('docs');
    await col(0).insertMany(Array.from({ length: total }, (_, n) => ({ _id: `d${n}`, n: 0 })));

    const results = await Promise.all(
      clients.flatMap((_, i) =>
        Array.from({ length: UPDATES_PER_CLIENT }, (_, j) =>
          col(i).updateOne({ _id: `d${i * UPDATES_PER_CLIENT + j}` }, { $inc: { n: 1 } }),
        ),
      ),
    );

    expect(results.reduce((sum, r) => sum + r.modifiedCount, 0)).toBe(total);
    expect(await col(0).countDocuments({ n: 1 })).toBe(total);
  }, 60_000);
});
