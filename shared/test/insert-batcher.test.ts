// Grouped inserts over the run's store: callers that come together share one
// insertMany, a duplicate is told apart from the rest of its group, a document the
// store refuses fails only its own caller, and a group the store fails rejects its
// callers without wedging the ones after it.
import { randomBytes } from 'node:crypto';
import { MongoClient, type Db } from 'mongodb';
import { InsertBatcher } from '../src/store/insert-batcher.ts';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.ts';

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
  viaProxy = await MongoClient.connect(proxied.toString(), { serverSelectionTimeoutMS: 1000 });
});

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
  const docs = [{ _id: 'a', n: 0 }, { _id: 'twin', n: 1 }, { _id: 'b', n: 2 }, { _id: 'bad', n: 3, s: 'ok\0' }, { _id: 'c', n: 4 }, { _id: 'd', n: 5 }];
  const outcomes = await Promise.allSettled(docs.map((d) => batcher.insert(d)));
  expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : 'rejected'))).toEqual(['inserted', 'duplicate', 'inserted', 'rejected', 'inserted', 'inserted']);
  expect((await col.find({}).sort({ _id: 1 }).toArray()).map((d) => [d._id, d.n])).toEqual([['a', 0], ['b', 2], ['c', 4], ['d', 5], ['twin', -1]]);
  // Its caller may retry it, cleaned, on its own.
  expect(await batcher.insert({ _id: 'bad', n: 3, s: 'ok' })).toBe('inserted');
});

test('when the store refuses one document of a group by a write error of its own (a key starting with $), then only its caller is rejected, and the others are stored', async () => {
  const col = db.collection<Record<string, unknown> & { _id: string }>('refused-one');
  await col.insertOne({ _id: 'twin', n: -1 });
  const batcher = new InsertBatcher(col);
  const docs = [{ _id: 'a' }, { _id: 'bad', $where: 1 }, { _id: 'twin' }, { _id: 'b' }];
  const outcomes = await Promise.allSettled(docs.map((d) => batcher.insert(d)));
  expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : 'rejected'))).toEqual(['inserted', 'rejected', 'duplicate', 'inserted']);
  expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ code: expect.any(Number) });
  expect((await col.find({}).sort({ _id: 1 }).toArray()).map((d) => d._id)).toEqual(['a', 'b', 'twin']);
});

test('when the store is cut while a group is under way, then its callers are rejected, and inserts after the store is back go in', async () => {
  const col = viaProxy.db(db.databaseName).collection<{ _id: string }>('cut');
  const batcher = new InsertBatcher(col, { lingerMs: 5 });
  expect(await batcher.insert({ _id: 'before' })).toBe('inserted');
  proxy.cut();
  const during = await Promise.allSettled([batcher.insert({ _id: 'a' }), batcher.insert({ _id: 'b' }), batcher.insert({ _id: 'c' })]);
  expect(during.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
  expect(await db.collection('cut').countDocuments({})).toBe(1);
  proxy.restore();
  expect(await Promise.all([batcher.insert({ _id: 'a' }), batcher.insert({ _id: 'd' })])).toEqual(['inserted', 'inserted']);
}, 30_000);
