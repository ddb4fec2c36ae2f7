// The store client's monitor watchdog (store/monitor-watchdog.ts): a heartbeat that
// never ends is a wedged monitor, and the client is closed and connected again,
// retrying while the store is away. The wedge itself is a race in the driver that a
// test cannot bring about at will, so the test announces a heartbeat that never ends
// (the event the wedged monitor leaves behind); the reconnect is real, through a TCP
// proxy to the store.
import { MongoClient } from 'mongodb';
import { isStoreError } from '../src/store/store-errors.ts';
import { watchMonitor, type MonitorWatchdog } from '../src/store/monitor-watchdog.ts';
import { startTcpProxy, type TcpProxy } from '@lpm/test-kit/tcp-proxy';
import { quietLogger, waitFor, sleep } from '@lpm/test-kit/wait';

let proxy: TcpProxy;
let client: MongoClient;
let watchdog: MonitorWatchdog;
const dbName = `${process.env.MONGO_DB_PREFIX}monitor_watchdog`;
const logged: string[] = [];

beforeAll(async () => {
  const store = new URL(process.env.MONGO_URL!);
  proxy = await startTcpProxy(store.hostname, Number(store.port));
  store.port = String(proxy.port);
  client = await MongoClient.connect(store.toString(), { serverSelectionTimeoutMS: 1000 });
  const logger = { ...quietLogger, error: (_: object, msg?: string) => logged.push(msg ?? '') };
  watchdog = watchMonitor(client, logger, { wedgedAfterMs: 200, checkEveryMs: 60_000 });
});

afterAll(async () => {
  watchdog.stop();
  proxy.restore();
  await client.db(dbName).dropDatabase();
  await client.close();
  await proxy.close();
});

const things = () => client.db(dbName).collection<{ _id: string }>('things');
const wedge = () => client.emit('serverHeartbeatStarted', { connectionId: 'wedged.example:27017', awaited: false });

test('when every heartbeat ends, then the watchdog leaves the client alone', async () => {
  await things().insertOne({ _id: 'a' });
  await sleep(300);
  expect(await watchdog.check()).toBe(false);
  expect(logged).toEqual([]);
});

test('when a heartbeat outlives its limit, then the client is connected again and keeps working', async () => {
  wedge();
  expect(await watchdog.check()).toBe(false);
  await sleep(300);
  expect(await watchdog.check()).toBe(true);
  expect(logged).toEqual(['store monitor wedged; reconnecting the store client']);
  expect(await things().findOne({ _id: 'a' })).toEqual({ _id: 'a' });
  await things().insertOne({ _id: 'b' });
  expect(await things().countDocuments()).toBe(2);
});

test('when the store is away at the reconnect, then operations fail as store errors and it is retried until the store is back', async () => {
  wedge();
  await sleep(300);
  proxy.cut();
  expect(await watchdog.check()).toBe(true);
  const failed = await things()
    .findOne({ _id: 'a' })
    .catch((e: unknown) => e);
  expect(isStoreError(failed)).toBe(true);
  // Still away: the next check tries again and fails.
  await watchdog.check();
  expect(
    isStoreError(
      await things()
        .findOne({ _id: 'a' })
        .catch((e: unknown) => e),
    ),
  ).toBe(true);

  proxy.restore();
  await waitFor(
    'the client connected again',
    async () => {
      await watchdog.check();
      return (
        (await things()
          .findOne({ _id: 'a' })
          .catch(() => null)) !== null
      );
    },
    20_000,
  );
  expect(await things().countDocuments()).toBe(2);
}, 30_000);
