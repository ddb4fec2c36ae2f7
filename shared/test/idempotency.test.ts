import { randomBytes } from 'node:crypto';
import { MongoClient, type Db } from 'mongodb';
import type { FastifyInstance } from 'fastify';
import { createHttpApp } from '../src/http/app.ts';
import { requireGateway } from '../src/http/gateway-auth.ts';
import { idempotentPosts, purgeIdempotencyKeys } from '../src/http/idempotency.ts';
import { defaultTeamSettings, identityHeaders, type Identity } from '../src/identity.ts';
import { newId } from '../src/ids.ts';
import { DAY_MS } from '../src/time.ts';
import { startTcpProxy } from '@lpm/test-kit/tcp-proxy';
import { waitFor } from '@lpm/test-kit/wait';

const TOKEN = randomBytes(16).toString('hex');
const team = (teamId: string): Identity => ({
  teamId,
  userId: 'user_1',
  scopes: ['read', 'write'],
  settings: defaultTeamSettings('UTC'),
});
let client: MongoClient;
let db: Db;
let app: FastifyInstance;
let calls = 0;
let failNext = false;
/** The cli ids the handler made, run by run. */
const made: string[] = [];

beforeAll(async () => {
  client = await MongoClient.connect(process.env.MONGO_URL!);
  db = client.db(`${process.env.MONGO_DB_PREFIX}idempotency`);
  app = createHttpApp({ name: 'idempotency-test', logger: false });
  requireGateway(app, TOKEN);
  idempotentPosts(app, db);
  app.post('/v1/things', async (req, reply) => {
    calls++;
    if ((req.body as { slow?: boolean }).slow) await new Promise((r) => setTimeout(r, 300));
    made.push(newId('cli'));
    if (failNext) {
      failNext = false;
      throw new Error('boom');
    }
    reply.status(201);
    return { success: true, data: { n: calls, at: new Date().toISOString(), id: made.at(-1), event: newId('evt') } };
  });
  await app.ready();
});

afterAll(async () => {
  await app.close();
  await db.dropDatabase();
  await client.close();
});

const post = (who: Identity, key: string | undefined, payload: object) =>
  app.inject({
    method: 'POST',
    url: '/v1/things',
    payload,
    headers: { ...identityHeaders(who, TOKEN), ...(key === undefined ? {} : { 'idempotency-key': key }) },
  });

test('when a POST is repeated with the same key, then the first response comes back byte for byte and the work runs once', async () => {
  const before = calls;
  const first = await post(team('team_a'), 'k-1', { name: 'x' });
  const again = await post(team('team_a'), 'k-1', { name: 'x' });
  expect(first.statusCode).toBe(201);
  expect(again.statusCode).toBe(201);
  expect(again.body).toBe(first.body);
  expect(again.headers['idempotent-replayed']).toBe('true');
  expect(first.headers['idempotent-replayed']).toBeUndefined();
  expect(calls - before).toBe(1);
});

test('when the same key comes with another body, then 422 and nothing runs', async () => {
  await post(team('team_b'), 'k-2', { name: 'x' });
  const before = calls;
  const res = await post(team('team_b'), 'k-2', { name: 'y' });
  expect(res.statusCode).toBe(422);
  expect(res.json().error).toMatchObject({
    code: 'VALIDATION_ERROR',
    message: 'Idempotency key reused with different request',
    details: { reason: 'idempotency_key_reused' },
  });
  expect(calls).toBe(before);
});

test('when another team uses the same key, then its request runs on its own', async () => {
  const a = await post(team('team_c1'), 'shared-key', { name: 'x' });
  const b = await post(team('team_c2'), 'shared-key', { name: 'x' });
  expect(b.headers['idempotent-replayed']).toBeUndefined();
  expect(b.json().data.n).not.toBe(a.json().data.n);
});

test('when the same key arrives while the first request is still running, then 409 and the work runs once', async () => {
  const before = calls;
  const [x, y] = await Promise.all([
    post(team('team_d'), 'k-3', { slow: true }),
    post(team('team_d'), 'k-3', { slow: true }),
  ]);
  expect([x.statusCode, y.statusCode].sort()).toEqual([201, 409]);
  expect(calls - before).toBe(1);
});

test('when the first attempt fails with a server error, then a retry with the key runs again', async () => {
  failNext = true;
  const first = await post(team('team_e'), 'k-4', { name: 'x' });
  expect(first.statusCode).toBe(500);
  const retry = await post(team('team_e'), 'k-4', { name: 'x' });
  expect(retry.statusCode).toBe(201);
  expect(retry.headers['idempotent-replayed']).toBeUndefined();
});

test('when a run under a key fails after making an id, then the run again makes the same id, and runs under another key or none make others', async () => {
  failNext = true;
  expect((await post(team('team_g'), 'k-7', { name: 'x' })).statusCode).toBe(500);
  const failedRun = made.at(-1);
  const again = (await post(team('team_g'), 'k-7', { name: 'x' })).json().data;
  expect(again.id).toBe(failedRun);
  const other = (await post(team('team_g'), 'k-8', { name: 'x' })).json().data;
  const unkeyed = (await post(team('team_g'), undefined, { name: 'x' })).json().data;
  expect(new Set([again.id, other.id, unkeyed.id]).size).toBe(3);
  expect(again.event).not.toBe(other.event);
});

test('when the key is longer than 255 characters, then 400', async () => {
  const res = await post(team('team_f'), 'k'.repeat(256), { name: 'x' });
  expect(res.statusCode).toBe(400);
  expect(res.json().error.message).toBe('Idempotency-Key must be 1 to 255 characters');
});

test('when no key is sent, then every POST runs', async () => {
  const before = calls;
  await post(team('team_g'), undefined, { name: 'x' });
  await post(team('team_g'), undefined, { name: 'x' });
  expect(calls - before).toBe(2);
});

test('when the purge runs, then records older than 24 h are gone, newer ones stay, and a purged key runs its POST again', async () => {
  await post(team('team_h'), 'k-old', { name: 'x' });
  await post(team('team_h'), 'k-new', { name: 'x' });
  const entries = db.collection<{ _id: string; created_at: Date }>('idempotency_keys');
  await entries.updateOne({ _id: 'team_h:k-old' }, { $set: { created_at: new Date(Date.now() - 25 * 3600 * 1000) } });

  expect(await purgeIdempotencyKeys(db)).toBeGreaterThanOrEqual(1);

  expect(await entries.findOne({ _id: 'team_h:k-old' })).toBeNull();
  expect(await entries.findOne({ _id: 'team_h:k-new' })).not.toBeNull();
  const before = calls;
  const again = await post(team('team_h'), 'k-new', { name: 'x' });
  expect(again.headers['idempotent-replayed']).toBe('true');
  const rerun = await post(team('team_h'), 'k-old', { name: 'x' });
  expect(rerun.headers['idempotent-replayed']).toBeUndefined();
  expect(calls - before).toBe(1);
});

test('when the purge runs with its cursor stored, then entries go by the day they were created and those of the last 24 h stay', async () => {
  await purgeIdempotencyKeys(db); // stores the cursor if no run did yet
  await post(team('team_i'), 'k-day', { name: 'x' });
  const entries = db.collection<{ _id: string; created_at: Date; created_day: number }>('idempotency_keys');
  const entry = await entries.findOne({ _id: 'team_i:k-day' });
  expect(entry?.created_day).toBe(Math.floor(entry!.created_at.getTime() / DAY_MS));
  const inTwoDays = new Date(Date.now() + 2 * DAY_MS);
  await entries.insertOne({
    _id: 'team_i:k-future',
    created_at: inTwoDays,
    created_day: Math.floor(inTwoDays.getTime() / DAY_MS),
  });

  await purgeIdempotencyKeys(db, new Date(Date.now() + DAY_MS / 2));
  expect(await entries.findOne({ _id: 'team_i:k-day' })).not.toBeNull();
  expect(await purgeIdempotencyKeys(db, new Date(inTwoDays.getTime() - 1))).toBeGreaterThanOrEqual(1);
  expect(await entries.findOne({ _id: 'team_i:k-day' })).toBeNull();
  expect(await entries.findOne({ _id: 'team_i:k-future' })).not.toBeNull();
});

test('when the store fails after the work is done, then the caller still gets its answer, and a retry is held off rather than run again', async () => {
  const store = new URL(process.env.MONGO_URL!);
  const proxy = await startTcpProxy(store.hostname, Number(store.port));
  const viaProxy = new URL(store);
  viaProxy.port = String(proxy.port);
  const flaky = await MongoClient.connect(viaProxy.toString(), { serverSelectionTimeoutMS: 500, timeoutMS: 1000 });
  const other = createHttpApp({ name: 'idempotency-store-fails', logger: false });
  requireGateway(other, TOKEN);
  idempotentPosts(other, flaky.db(db.databaseName));
  let done = 0;
  other.post('/v1/things', async (_req, reply) => {
    done++;
    proxy.cut(); // the store goes before the entry is settled
    reply.status(201);
    return { success: true, data: { done } };
  });
  await other.ready();
  const send = () =>
    other.inject({
      method: 'POST',
      url: '/v1/things',
      payload: { name: 'x' },
      headers: { ...identityHeaders(team('team_f'), TOKEN), 'idempotency-key': 'k-f' },
    });
  try {
    const first = await send();
    expect({ status: first.statusCode, body: first.json() }).toEqual({
      status: 201,
      body: { success: true, data: { done: 1 } },
    });
    proxy.restore();
    // The retry comes once the store answers again: the driver finds it back on its next heartbeat.
    await waitFor(
      'the store back',
      () =>
        flaky
          .db('admin')
          .command({ ping: 1 })
          .then(
            () => true,
            () => false,
          ),
      30_000,
    );
    const retry = await send();
    expect(retry.statusCode).toBe(409);
    expect(done).toBe(1);
  } finally {
    proxy.restore();
    await other.close();
    await flaky.close();
    await proxy.close();
  }
});
