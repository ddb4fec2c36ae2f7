// Each replica keeps a copy of a team's subscribed webhooks and reads the store again
// only after the team's version in Redis changed: two repositories on one store, each
// with its own Redis client (two replicas), against the run's Redis under a key prefix
// of this file's; Redis cut off through a TCP proxy.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { newId } from '@lpm/shared/ids';
import { closeRedis, createRedis, redisReady } from '@lpm/shared/redis';
import { startTcpProxy, type TcpProxy } from '@lpm/test-kit/tcp-proxy';
import { captureLogger } from '@lpm/test-kit/wait';
import { TeamVersions } from '../src/data/team-versions.ts';
import type { WebhookRecord } from '../src/data/webhook-entity.ts';
import { WebhooksRepository } from '../src/data/webhooks-repository.ts';
import { SecretBox } from '../src/domain/secret-box.ts';
import { generateSecret } from '../src/domain/signing.ts';
import { ALL_EVENTS } from '../src/domain/webhooks.ts';
import { watchStore, type WatchedStore } from './store-commands.ts';
import { webhookRecord } from './records.ts';

const PREFIX = `${process.env.REDIS_KEY_PREFIX}copies-${randomBytes(4).toString('hex')}:`;
const box = new SecretBox(randomBytes(32));
const redisUrl = new URL(process.env.REDIS_URL!);

let store: WatchedStore;
let proxy: TcpProxy;
const clients: Redis[] = [];

/** A replica's repository: its own Redis client (through the proxy when asked). */
async function replica(viaProxy = false): Promise<WebhooksRepository> {
  const url = viaProxy ? `redis://127.0.0.1:${proxy.port}` : redisUrl.toString();
  const redis = createRedis(url, 'lpm-test-webhooks-versions');
  clients.push(redis);
  expect(await redisReady(redis, 5000)).toBe(true);
  return new WebhooksRepository(store.db, { versions: new TeamVersions(redis, PREFIX, captureLogger()) });
}

function record(teamId: string, url: string, events = ['client.created']): WebhookRecord {
  return webhookRecord(teamId, url, { events, secret_sealed: box.seal(generateSecret()) });
}

/** The store reads of the webhooks collection since the last call. */
const webhookReads = () => store.take().filter((q) => q.op === 'find' && q.collection === 'webhooks').length;
const ids = (hooks: WebhookRecord[]) => hooks.map((h) => h._id).sort();

/** Two replicas reaching Redis through the proxy, and a team with one webhook the second one added. */
async function twoReplicasBehindProxy(name: string) {
  const a = await replica(true);
  const b = await replica(true);
  const team = newId('team');
  const first = record(team, `https://hooks.example.com/${name}-first`);
  await b.insertWithin(first, 25);
  return { a, b, team, first };
}

beforeAll(async () => {
  store = await watchStore(`${process.env.MONGO_DB_PREFIX}webhooks_copies_${randomBytes(4).toString('hex')}`);
  proxy = await startTcpProxy(redisUrl.hostname, Number(redisUrl.port || 6379));
});

// The versions' keys go with the run's key prefix (test/global-teardown.ts).
afterAll(async () => {
  await Promise.all(clients.map((c) => closeRedis(c)));
  await proxy.close();
  await store.db.dropDatabase();
  await store.close();
});

test('when one replica adds, changes or removes a webhook, then the other sees it at its next event, and reads the store only after a change', async () => {
  const [a, b] = [await replica(), await replica()];
  const team = newId('team');
  const first = record(team, 'https://hooks.example.com/first');
  await a.insertWithin(first, 25);

  webhookReads();
  expect(ids(await a.subscribed(team, 'client.created', ALL_EVENTS))).toEqual([first._id]);
  expect(await a.subscribed(team, 'client.updated', ALL_EVENTS)).toEqual([]);
  await Promise.all(Array.from({ length: 20 }, () => a.subscribed(team, 'client.created', ALL_EVENTS)));
  expect(webhookReads()).toBe(1);

  // Added on the other replica: the next event here has it, read once.
  const second = record(team, 'https://hooks.example.com/second', [ALL_EVENTS]);
  await b.insertWithin(second, 25);
  webhookReads();
  expect(ids(await a.subscribed(team, 'client.created', ALL_EVENTS))).toEqual(ids([first, second]));
  expect(ids(await a.subscribed(team, 'client.updated', ALL_EVENTS))).toEqual([second._id]);
  expect(webhookReads()).toBe(1);

  // Its events changed there: here at once.
  await b.update(team, first._id, () => ({ events: ['case.created'] }));
  webhookReads();
  expect(ids(await a.subscribed(team, 'client.created', ALL_EVENTS))).toEqual([second._id]);
  expect(webhookReads()).toBe(1);
  // Deactivated (by failures) there: gone here.
  expect(await b.deactivate(second, 'failures')).toBe(true);
  expect(await a.subscribed(team, 'client.created', ALL_EVENTS)).toEqual([]);
  // Removed there: gone here.
  await b.remove(team, first._id);
  expect(await a.subscribed(team, 'case.created', ALL_EVENTS)).toEqual([]);
  // Another team's copy is its own, and kept too.
  const other = newId('team');
  webhookReads();
  expect(await a.subscribed(other, 'client.created', ALL_EVENTS)).toEqual([]);
  expect(await a.subscribed(other, 'client.created', ALL_EVENTS)).toEqual([]);
  expect(await a.subscribed(team, 'case.created', ALL_EVENTS)).toEqual([]);
  expect(webhookReads()).toBe(1);
});

test('when Redis cannot be reached, then every event just created reads the store, and a change made meanwhile is seen once Redis is back', async () => {
  const { a, b, team, first } = await twoReplicasBehindProxy('outage');
  expect(ids(await a.subscribed(team, 'client.created', ALL_EVENTS))).toEqual([first._id]);
  webhookReads();

  proxy.cut();
  // A change whose version Redis cannot take: the store still has it.
  const second = record(team, 'https://hooks.example.com/outage-second');
  await b.insertWithin(second, 25);
  expect(ids(await a.subscribed(team, 'client.created', ALL_EVENTS))).toEqual(ids([first, second]));
  expect(ids(await a.subscribed(team, 'client.created', ALL_EVENTS))).toEqual(ids([first, second]));
  expect(webhookReads()).toBe(2);

  proxy.restore();
  for (const c of clients.slice(-2)) expect(await redisReady(c, 10_000)).toBe(true);
  // The copy read before the outage went when Redis could not tell: read once more, then kept.
  expect(ids(await a.subscribed(team, 'client.created', ALL_EVENTS))).toEqual(ids([first, second]));
  expect(ids(await a.subscribed(team, 'client.created', ALL_EVENTS))).toEqual(ids([first, second]));
  expect(webhookReads()).toBe(1);
});

test('when Redis cannot be reached and a backlog of older events comes in, then they share one store read per team, and an event created after a change still sees it', async () => {
  const { a, b, team, first } = await twoReplicasBehindProxy('backlog');
  proxy.cut();
  try {
    const minuteAgo = new Date(Date.now() - 60_000).toISOString();
    webhookReads();
    const backlog = await Promise.all(
      Array.from({ length: 30 }, () => a.subscribed(team, 'client.created', ALL_EVENTS, minuteAgo)),
    );
    for (const hooks of backlog) expect(ids(hooks)).toEqual([first._id]);
    expect(ids(await a.subscribed(team, 'client.created', ALL_EVENTS, minuteAgo))).toEqual([first._id]);
    expect(webhookReads()).toBe(1);

    // A change answered on the other replica, then an event created: that event reads the store again and has it.
    const second = record(team, 'https://hooks.example.com/backlog-second');
    await b.insertWithin(second, 25);
    const after = new Date().toISOString();
    expect(ids(await a.subscribed(team, 'client.created', ALL_EVENTS, after))).toEqual(ids([first, second]));
    // An event created within the clocks' margin of a read is not served by it either.
    expect(ids(await a.subscribed(team, 'client.created', ALL_EVENTS, new Date().toISOString()))).toEqual(
      ids([first, second]),
    );
    expect(webhookReads()).toBe(2);
  } finally {
    proxy.restore();
  }
  for (const c of clients.slice(-2)) expect(await redisReady(c, 10_000)).toBe(true);
});
