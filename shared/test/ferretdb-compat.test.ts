// What the platform relies on from its document store, checked against the
// FerretDB the tests run on: the MongoDB driver, MikroORM 7 and agenda 6.
import { MongoClient, MongoServerError, type Db } from 'mongodb';
import { Agenda } from 'agenda';
import { MongoBackend } from '@agendajs/mongo-backend';
import { MikroORM, defineEntity, p } from '@mikro-orm/mongodb';
import { isDuplicateKey } from '../src/store/duplicate-key.ts';

const url = process.env.MONGO_URL!;
const dbName = `${process.env.MONGO_DB_PREFIX}compat`;
let client: MongoClient;
let db: Db;

beforeAll(async () => {
  client = await MongoClient.connect(url);
  db = client.db(dbName);
});

afterAll(async () => {
  await db.dropDatabase();
  await client.close();
});

test('when the MongoDB driver writes and reads, then unique indexes, filters, sorts and findOneAndUpdate behave as on MongoDB', async () => {
  const col = db.collection<{ _id: string; team: string; key: string; n: number }>('driver');
  await col.createIndex({ team: 1, key: 1 }, { unique: true });
  await col.insertMany([
    { _id: 'a', team: 't1', key: 'k1', n: 3 },
    { _id: 'b', team: 't1', key: 'k2', n: 1 },
    { _id: 'c', team: 't2', key: 'k1', n: 2 },
  ]);
  await expect(col.insertOne({ _id: 'd', team: 't1', key: 'k1', n: 9 })).rejects.toMatchObject({ code: 11000 });
  const found = await col
    .find({ team: 't1', n: { $gte: 1 } })
    .sort({ n: -1, _id: -1 })
    .toArray();
  expect(found.map((d) => d._id)).toEqual(['a', 'b']);
  const updated = await col.findOneAndUpdate({ _id: 'b' }, { $inc: { n: 10 } }, { returnDocument: 'after' });
  expect(updated?.n).toBe(11);
  // FerretDB reports a unique violation on update as an internal error; isDuplicateKey knows both forms.
  const dupOnUpdate = await col.updateOne({ _id: 'c' }, { $set: { team: 't1' } }).catch((e: unknown) => e);
  expect(isDuplicateKey(dupOnUpdate)).toBe(true);
});

test('when MikroORM 7 maps an entity, then it creates the indexes, enforces uniqueness and finds with a filter and a sort', async () => {
  const Thing = defineEntity({
    name: 'CompatThing',
    collection: 'orm_things',
    properties: {
      _id: p.string().primary(),
      team: p.string(),
      title: p.string(),
      created_at: p.datetime(),
    },
    uniques: [{ properties: ['team', 'title'] }],
  });
  const orm = await MikroORM.init({ clientUrl: url, dbName, entities: [Thing], allowGlobalContext: false });
  await orm.schema.ensureIndexes();
  try {
    const em = orm.em.fork();
    em.create(Thing, { _id: 't1', team: 'x', title: 'A', created_at: new Date(1000) });
    em.create(Thing, { _id: 't2', team: 'x', title: 'B', created_at: new Date(2000) });
    em.create(Thing, { _id: 't3', team: 'y', title: 'A', created_at: new Date(3000) });
    await em.flush();
    const dup = orm.em.fork();
    dup.create(Thing, { _id: 't4', team: 'x', title: 'A', created_at: new Date() });
    expect(isDuplicateKey(await dup.flush().catch((e: unknown) => e))).toBe(true);
    const [rows, total] = await orm.em
      .fork()
      .findAndCount(Thing, { team: 'x' }, { orderBy: { created_at: 'desc' }, limit: 1 });
    expect(rows.map((r) => r._id)).toEqual(['t2']);
    expect(total).toBe(2);
  } finally {
    await orm.close();
  }
});

test('when agenda 6 schedules a job on FerretDB, then it runs', async () => {
  let runs = 0;
  const backend = new MongoBackend({ address: `${url}${dbName}` });
  const agenda = new Agenda({ backend, processEvery: 100 });
  agenda.define('compat-once', async () => {
    runs++;
  });
  try {
    await agenda.start();
    await agenda.schedule(new Date(Date.now() + 300), 'compat-once', {});
    const deadline = Date.now() + 10_000;
    while (runs === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(runs).toBe(1);
  } finally {
    await agenda.stop(true);
    await backend.disconnect();
  }
});

// agenda locks a job with findOneAndUpdate, which FerretDB 1.24 does not isolate:
// two instances can both take one job. Work that must happen once claims its key
// with an insert (atomic on FerretDB) before doing anything.
test('when two agenda instances both fire one job, then an insert-based claim lets the work run once', async () => {
  const fired: string[] = [];
  const worked: string[] = [];
  const claims = db.collection<{ _id: string }>('job_claims');
  const backends: MongoBackend[] = [];
  const make = (name: string) => {
    const backend = new MongoBackend({ address: `${url}${dbName}` });
    backends.push(backend);
    const agenda = new Agenda({ backend, processEvery: 50, name });
    agenda.define('compat-shared', async (job) => {
      fired.push(name);
      const key = `compat-shared:${String(job.attrs._id)}`;
      const mine = await claims.insertOne({ _id: key }).then(
        () => true,
        (e: unknown) => {
          if (e instanceof MongoServerError && e.code === 11000) return false;
          throw e;
        },
      );
      if (mine) worked.push(name);
    });
    return agenda;
  };
  const [a, b] = [make('a'), make('b')];
  try {
    await Promise.all([a.start(), b.start()]);
    await a.now('compat-shared', {});
    const deadline = Date.now() + 10_000;
    while (fired.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 1000));
    expect(fired.length).toBeGreaterThanOrEqual(1);
    expect(worked).toHaveLength(1);
  } finally {
    await Promise.all([a.stop(true), b.stop(true)]);
    await Promise.all(backends.map((x) => x.disconnect()));
  }
});
