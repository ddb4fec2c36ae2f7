// Grouped inserts over the run's store: callers that come together share one
// insertMany, a duplicate is told apart from the rest of its group, a document the
// store refuses fails only its own caller, and a group failed by a store that is
// unavailable (cut, hung, its backend gone) rejects its callers at once, with no
// insert of each document alone, without wedging the ones after it.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient, MongoNetworkError, MongoServerError, type Db } from 'mongodb';
import { dropPostgresDatabase, startFerretdb, type RunningStore } from '../../scripts/local-store.ts';
import { InsertBatcher } from '../src/store/insert-batcher.ts';
import { isStoreUnavailable } from '../src/store/store-errors.ts';
import { startTcpProxy, type TcpProxy } from '@lpm/test-kit/tcp-proxy';

let client: MongoClient;
let db: Db;
let proxy: TcpProxy;
let viaProxy: MongoClient;

beforeAll(async () => {
  const url = new URL(process.env.MONGO_URL!);
  client = await MongoClient.connect(url.toString(), { monitorCommands: true });
  db = client.db(`${process.env.MONGO_DB_PREFIX}batcher_${randomBytes(4).toString('hex')}`);
  proxy = await startTcpProxy(url.hostname, Number(url.port));
  const proxied = new URL(url);
  proxied.port = String(proxy.port);
  viaProxy = await MongoClient.connect(proxied.toString(), { serverSelectionTimeoutMS: 1000, monitorCommands: true });
});

/** Counts the insert commands `c` starts into `collection` while `fn` runs. */
async function countingInserts<T>(
  c: MongoClient,
  collection: string,
  fn: () => Promise<T>,
): Promise<{ result: T; inserts: number }> {
  let inserts = 0;
  const count = (e: { commandName: string; command: Record<string, unknown> }) => {
    if (e.commandName === 'insert' && e.command.insert === collection) inserts++;
  };
  c.on('commandStarted', count);
  try {
    return { result: await fn(), inserts };
  } finally {
    c.off('commandStarted', count);
  }
}

const statuses = (outcomes: PromiseSettledResult<unknown>[]) =>
  outcomes.map((o) => (o.status === 'fulfilled' ? o.value : 'rejected'));

afterAll(async () => {
  proxy?.restore();
  await db?.dropDatabase();
  await client?.close();
  await viaProxy?.close();
  await proxy?.close();
});

test('when callers insert in the same turn, then one insertMany carries them, and a duplicate among them is told apart', async () => {
  const col = db.collection<{ _id: string; n: number }>('grouped');
  await col.insertOne({ _id: 'd5', n: -1 });
  let inserts = 0;
  const count = (e: { commandName: string; command: Record<string, unknown> }) => {
    if (e.commandName === 'insert' && e.command.insert === 'grouped') inserts++;
  };
  client.on('commandStarted', count);
  try {
    const batcher = new InsertBatcher(col);
    const outcomes = await Promise.all(Array.from({ length: 10 }, (_, n) => batcher.insert({ _id: `d${n}`, n })));
    expect(outcomes).toEqual(Array.from({ length: 10 }, (_, n) => (n === 5 ? 'duplicate' : 'inserted')));
    expect(inserts).toBe(1);
    expect(await col.countDocuments({ n: { $gte: 0 } })).toBe(9);
  } finally {
    client.off('commandStarted', count);
  }
});

test('when the store refuses one document of a group without saying which (a string holding NUL), then only its caller is rejected, and the others are stored and told inserted or duplicate', async () => {
  const col = db.collection<{ _id: string; n: number; s?: string }>('refused-whole');
  await col.insertOne({ _id: 'twin', n: -1 });
  const batcher = new InsertBatcher(col);
  // FerretDB 1.24 stores the documents before the refused one, then fails the command with no write errors.
  const docs = [
    { _id: 'a', n: 0 },
    { _id: 'twin', n: 1 },
    { _id: 'b', n: 2 },
    { _id: 'bad', n: 3, s: 'ok\0' },
    { _id: 'c', n: 4 },
    { _id: 'd', n: 5 },
  ];
  const { result: outcomes, inserts } = await countingInserts(client, 'refused-whole', () =>
    Promise.allSettled(docs.map((d) => batcher.insert(d))),
  );
  expect(statuses(outcomes)).toEqual(['inserted', 'duplicate', 'inserted', 'rejected', 'inserted', 'inserted']);
  // The group, then each of its documents on its own.
  expect(inserts).toBe(1 + docs.length);
  expect((await col.find({}).sort({ _id: 1 }).toArray()).map((d) => [d._id, d.n])).toEqual([
    ['a', 0],
    ['b', 2],
    ['c', 4],
    ['d', 5],
    ['twin', -1],
  ]);
  // Its caller may retry it, cleaned, on its own.
  expect(await batcher.insert({ _id: 'bad', n: 3, s: 'ok' })).toBe('inserted');
});

test('when the store refuses one document of a group by a write error of its own (a key starting with $), then only its caller is rejected, and the others are stored', async () => {
  const col = db.collection<Record<string, unknown> & { _id: string }>('refused-one');
  await col.insertOne({ _id: 'twin', n: -1 });
  const batcher = new InsertBatcher(col);
  const docs = [{ _id: 'a' }, { _id: 'bad', $where: 1 }, { _id: 'twin' }, { _id: 'b' }];
  const outcomes = await Promise.allSettled(docs.map((d) => batcher.insert(d)));
  expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : 'rejected'))).toEqual([
    'inserted',
    'rejected',
    'duplicate',
    'inserted',
  ]);
  expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ code: expect.any(Number) });
  expect((await col.find({}).sort({ _id: 1 }).toArray()).map((d) => d._id)).toEqual(['a', 'b', 'twin']);
});

test('when the store is cut while a group is under way, then its callers are rejected at once, and inserts after the store is back go in', async () => {
  const col = viaProxy.db(db.databaseName).collection<{ _id: string }>('cut');
  const batcher = new InsertBatcher(col, { lingerMs: 5 });
  expect(await batcher.insert({ _id: 'before' })).toBe('inserted');
  proxy.cut();
  const { result: during, inserts } = await countingInserts(viaProxy, 'cut', () =>
    Promise.allSettled([batcher.insert({ _id: 'a' }), batcher.insert({ _id: 'b' }), batcher.insert({ _id: 'c' })]),
  );
  expect(statuses(during)).toEqual(['rejected', 'rejected', 'rejected']);
  // No connection to send it on: not even the group's command starts, and no document is tried alone.
  expect(inserts).toBeLessThanOrEqual(1);
  expect(await db.collection('cut').countDocuments({})).toBe(1);
  proxy.restore();
  expect(await Promise.all([batcher.insert({ _id: 'a' }), batcher.insert({ _id: 'd' })])).toEqual([
    'inserted',
    'inserted',
  ]);
}, 30_000);

test('when the store hangs while a group is under way, then its callers are rejected at once when the command times out, with no insert of each document alone', async () => {
  const col = viaProxy.db(db.databaseName, { timeoutMS: 1500 }).collection<{ _id: string }>('hung');
  const batcher = new InsertBatcher(col, { lingerMs: 5 });
  expect(await batcher.insert({ _id: 'before' })).toBe('inserted');
  proxy.stall();
  try {
    const { result: during, inserts } = await countingInserts(viaProxy, 'hung', () =>
      Promise.allSettled(['a', 'b', 'c', 'd'].map((_id) => batcher.insert({ _id }))),
    );
    expect(statuses(during)).toEqual(['rejected', 'rejected', 'rejected', 'rejected']);
    expect(inserts).toBe(1);
  } finally {
    proxy.restore();
  }
}, 30_000);

// FerretDB up, the PostgreSQL it stores into gone: FerretDB answers every command, each
// with an InternalError ("failed to connect to ...", "unexpected EOF"). A FerretDB of its
// own, whose PostgreSQL connections go through a proxy this test cuts.
const onPostgres = process.env.LPM_TEST_PG_DATABASE ? describe : describe.skip;

onPostgres('a store whose backend is gone', () => {
  const database = `${process.env.LPM_TEST_PG_DATABASE}_batcher`;
  const dir = mkdtempSync(join(tmpdir(), 'lpm-batcher-'));
  let backend: TcpProxy;
  let store: RunningStore;
  let storeClient: MongoClient;

  beforeAll(async () => {
    const pg = new URL(process.env.LPM_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
    backend = await startTcpProxy(pg.hostname, Number(pg.port || 5432));
    const viaBackendProxy = new URL(pg);
    viaBackendProxy.port = String(backend.port);
    // startFerretdb reads where PostgreSQL is from LPM_POSTGRES_URL.
    const saved = process.env.LPM_POSTGRES_URL;
    process.env.LPM_POSTGRES_URL = viaBackendProxy.toString();
    try {
      store = await startFerretdb({ dataDir: dir, database });
    } finally {
      if (saved === undefined) delete process.env.LPM_POSTGRES_URL;
      else process.env.LPM_POSTGRES_URL = saved;
    }
    storeClient = await MongoClient.connect(store.url, { monitorCommands: true });
  }, 60_000);

  afterAll(async () => {
    backend?.restore();
    await storeClient?.close();
    await store?.stop();
    await backend?.close();
    await dropPostgresDatabase(database);
    rmSync(dir, { recursive: true, force: true });
  });

  test('when a group fails because FerretDB cannot reach PostgreSQL, then its callers are rejected at once with one insert command, not one more per document, and inserts go in once it is back', async () => {
    const col = storeClient.db('batcher', { timeoutMS: 5000 }).collection<{ _id: string }>('backend-gone');
    const batcher = new InsertBatcher(col, { lingerMs: 5 });
    expect(await batcher.insert({ _id: 'before' })).toBe('inserted');
    backend.cut();
    try {
      const docs = ['a', 'b', 'c', 'd', 'e'].map((_id) => ({ _id }));
      const { result: during, inserts } = await countingInserts(storeClient, 'backend-gone', () =>
        Promise.allSettled(docs.map((d) => batcher.insert(d))),
      );
      expect(statuses(during)).toEqual(docs.map(() => 'rejected'));
      expect((during[0] as PromiseRejectedResult).reason).toMatchObject({ code: 1 });
      expect(inserts).toBe(1);
    } finally {
      backend.restore();
    }
    expect(await Promise.all([batcher.insert({ _id: 'a' }), batcher.insert({ _id: 'f' })])).toEqual([
      'inserted',
      'inserted',
    ]);
  }, 60_000);
});

describe('isStoreUnavailable, which fails a group at once', () => {
  const serverError = (code: number, errmsg: string, label?: string) => {
    const e = new MongoServerError({ ok: 0, code, errmsg });
    if (label) e.addErrorLabel(label);
    return e;
  };

  test.each([
    ['a network error (no code)', new MongoNetworkError('connection 4 to 127.0.0.1:27017 closed')],
    ['MongoDB without a primary (labelled retryable)', serverError(10107, 'not primary', 'RetryableWriteError')],
    [
      'FerretDB refused by PostgreSQL at connect',
      serverError(1, 'failed to connect to `user=postgres database=lpm`: dial error: connection reset by peer'),
    ],
    [
      'FerretDB cut from PostgreSQL mid-command',
      serverError(1, '[msg_insert.go:168 handler.(*Handler).MsgInsert] unexpected EOF'),
    ],
    [
      'PostgreSQL shutting down',
      serverError(1, 'FATAL: terminating connection due to administrator command (SQLSTATE 57P01)'),
    ],
  ])('when %s, then the store is unavailable', (_what, err) => {
    expect(isStoreUnavailable(err)).toBe(true);
  });

  test.each([
    ['FerretDB refusing a string holding NUL', serverError(1, 'unsupported Unicode escape sequence (SQLSTATE 22P05)')],
    ['a duplicate key', serverError(11000, 'E11000 duplicate key error')],
    ['a document MongoDB refuses', serverError(121, 'Document failed validation')],
  ])('when %s, then it is a refusal of what was sent', (_what, err) => {
    expect(isStoreUnavailable(err)).toBe(false);
  });
});
