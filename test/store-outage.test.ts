// A store that hangs fails each request within its budget, and then nothing is
// lost when the store has a bad minute. The whole system runs
// with its store behind a TCP proxy; right after a burst of client renames the proxy
// is cut for 60 s (far longer than any retry window the consumers once had). The
// webhook receiver holds its answers until the cut, so the webhooks service has
// every event in hand and none of their deliveries stored when the store goes. Once
// it is back, every client.updated reaches the webhook receiver, is stored as
// delivered, and reaches the cases service's client view, and no dead-letter queue
// holds anything. A store hung for 75 s with a service SIGKILLed inside
// the hang (its restart once crashed at every start, and the launcher stopped
// everything) now leaves every process serving within 30 s of the store's return.
import { MongoClient } from 'mongodb';
import { TRANSIENT_DELAYS_MS } from '../shared/src/messaging/delivery.ts';
import { SERVICE_NAMES } from '../shared/src/service/names.ts';
import { internalPort, servicePort } from '../shared/src/service/port-layout.ts';
import { startHttpsReceiver, type HttpsReceiver } from '@lpm/test-kit/https-receiver';
import { proxyInFrontOf } from '@lpm/test-kit/proxied-url';
import type { TcpProxy } from '@lpm/test-kit/tcp-proxy';
import { waitFor, sleep } from '@lpm/test-kit/wait';
import { runCli, teamCreateArgs } from '@lpm/test-kit/cli';
import type { RunningSystem } from '@lpm/test-kit/running-system';
import { systemAndCompanionsForSuite } from '@lpm/test-kit/system-and-companions';

const BURST = 30;
const OUTAGE_MS = 60_000;
/** Resolved once the store is cut: the receiver answers no client.updated before. */
let storeCut!: () => void;
const cut = new Promise<void>((resolve) => (storeCut = resolve));

let proxy: TcpProxy;
let sys: RunningSystem;
let receiver: HttpsReceiver;
let direct: MongoClient;
let apiKey: string;

// Before the system stops: its processes' shutdown must not wait on a cut store.
afterAll(() => proxy?.restore());

systemAndCompanionsForSuite('storeoutage', {
  async start() {
    const store = await proxyInFrontOf(process.env.MONGO_URL!);
    proxy = store.proxy;
    receiver = await startHttpsReceiver(async (req) => {
      if (JSON.parse(req.body).type === 'client.updated') await cut;
      return { status: 200 };
    });
    return { MONGO_URL: store.url, WEBHOOK_ALLOW_PRIVATE_URLS: 'true' };
  },
  async ready(started) {
    sys = started;
    direct = await MongoClient.connect(process.env.MONGO_URL!);
    // Asynchronously: the proxy runs in this process, which a synchronous spawn would block.
    apiKey = (
      await admin(
        ...teamCreateArgs({ name: 'Apagão', plan: 'enterprise', ownerName: 'Dona', ownerEmail: 'dona@outage.example' }),
      )
    ).api_key;
  },
  async close() {
    await receiver?.close();
    await proxy?.close();
    await direct?.close();
  },
});

const exchange = () => sys.env.AMQP_EXCHANGE!;
const CONSUMER_QUEUES = ['webhooks.fan-out', 'webhooks.attempts', 'cases.client-views'];
async function admin(...args: string[]) {
  const run = await runCli(sys.env, ...args, '--json');
  if (run.code !== 0) throw new Error(`admin ${args.join(' ')}: ${run.stderr}`);
  return JSON.parse(run.stdout);
}
const deadLettered = () =>
  Promise.all(
    CONSUMER_QUEUES.map(async (q) => (await admin('dlq', 'list', '--queue', `${exchange()}.${q}`)).count as number),
  );
const delivered = () =>
  new Set(
    receiver.requests
      .map((r) => JSON.parse(r.body))
      .filter((p) => p.type === 'client.updated')
      .map((p) => p.data.object.id as string),
  );
const storedDeliveries = (webhookId: string) =>
  direct
    .db(`${sys.env.MONGO_DB_PREFIX}webhooks`)
    .collection('deliveries')
    .countDocuments({ webhook_id: webhookId, status: 'succeeded' });
const clientViews = () => direct.db(`${sys.env.MONGO_DB_PREFIX}cases`).collection('client_views');

test('when the store hangs (connections open, nothing answered), then a read answers 503 in the envelope within 10 s, and is served again once the store is back', async () => {
  // A team of its own: the cut below counts the clients of its team.
  const key = (
    await admin(
      ...teamCreateArgs({ name: 'Paciente', plan: 'enterprise', ownerName: 'Dona', ownerEmail: 'dona@hang.example' }),
    )
  ).api_key;
  const created = await sys.call(key, 'POST', '/v1/clients', { type: 'PF', name: 'Cliente paciente' });
  expect(created.status).toBe(201);
  const path = `/v1/clients/${created.body.data.id}`;
  proxy.stall();
  try {
    const askedAt = Date.now();
    const hung = await sys.call(key, 'GET', path);
    expect({ status: hung.status, code: hung.body.error?.code }).toEqual({ status: 503, code: 'SERVICE_UNAVAILABLE' });
    expect(Date.now() - askedAt).toBeLessThan(10_000);
  } finally {
    proxy.restore();
  }
  const backAt = Date.now();
  await waitFor('the client served again', async () => (await sys.call(key, 'GET', path)).status === 200, 30_000);
  expect(Date.now() - backAt).toBeLessThan(30_000);
}, 120_000);

test('when the store is cut for 60 s right after a burst of writes, then every event reaches the webhook and the client view once it is back, and nothing is dead-lettered', async () => {
  const hook = await sys.call(apiKey, 'POST', '/v1/webhooks', {
    url: `${receiver.url}/outage`,
    events: ['client.updated'],
  });
  expect(hook.status).toBe(201);
  const created = await Promise.all(
    Array.from({ length: BURST }, (_, i) =>
      sys.call(apiKey, 'POST', '/v1/clients', { type: 'PF', name: `Cliente ${i}` }),
    ),
  );
  expect(created.map((r) => r.status)).toEqual(Array(BURST).fill(201));
  const ids = created.map((r) => r.body.data.id as string).sort();

  // Views are fed by client.updated (a new client has no view until something links to it).
  const renamed = await Promise.all(
    ids.map((id, i) => sys.call(apiKey, 'PUT', `/v1/clients/${id}`, { name: `Renomeado ${i}` })),
  );
  expect(renamed.map((r) => r.status)).toEqual(Array(BURST).fill(200));
  proxy.cut();
  storeCut();
  const cutAt = Date.now();
  while (Date.now() - cutAt < OUTAGE_MS) {
    expect(await deadLettered()).toEqual([0, 0, 0]);
    await sleep(10_000);
  }
  // The outage was felt: the receiver had the POSTs, and not one delivery could be stored.
  expect(await storedDeliveries(hook.body.data.id)).toBe(0);
  proxy.restore();
  // Each consumer tries again within its longest transient retry delay of the store's
  // return (a message that failed just before it waits that long), then has 30 s to finish.
  const settledBy = Date.now() + Math.max(...TRANSIENT_DELAYS_MS) + 30_000;
  const untilSettled = () => Math.max(1000, settledBy - Date.now());

  await waitFor(
    'every delivery stored as succeeded',
    async () => (await storedDeliveries(hook.body.data.id)) === BURST,
    untilSettled(),
  );
  expect([...delivered()].sort()).toEqual(ids);
  await waitFor(
    'every client in the cases view',
    async () => (await clientViews().countDocuments({ _id: { $in: ids } } as object)) === BURST,
    untilSettled(),
  );
  const names = (
    await clientViews()
      .find({ _id: { $in: ids } } as object)
      .toArray()
  ).map((v) => v.name as string);
  expect(names.every((n) => n.startsWith('Renomeado '))).toBe(true);
  expect(await deadLettered()).toEqual([0, 0, 0]);
  const listed = await sys.call(apiKey, 'GET', '/v1/clients?limit=100');
  expect(listed.status).toBe(200);
  expect(listed.body.pagination?.total).toBe(BURST);
}, 300_000);

/** Whether every process answers its readiness probe with 200 (its port from shared/src/service/port-layout.ts). */
async function everyProcessReady(): Promise<boolean> {
  const ports = [...SERVICE_NAMES.map((name) => servicePort(sys.base, name)), internalPort(sys.base)];
  const statuses = await Promise.all(
    ports.map((port) =>
      fetch(`http://127.0.0.1:${port}/health/ready`, { signal: AbortSignal.timeout(5000) }).then(
        (r) => r.status,
        () => 0,
      ),
    ),
  );
  return statuses.every((s) => s === 200);
}

test("when the store hangs for 75 s and a service is SIGKILLed inside the hang, then nothing is stopped, it is started once, and every process is ready within 30 s of the store's return", async () => {
  await waitFor('every process ready before the hang', everyProcessReady, 60_000);
  const victim = sys.pidOf('activities');
  const kills = () => sys.launcher.output().match(/\[start\] activities exited/g)?.length ?? 0;
  const killsBefore = kills();
  proxy.stall();
  const hungAt = Date.now();
  try {
    await sleep(5000);
    process.kill(victim, 'SIGKILL');
    await waitFor('activities started again', () => sys.pidOf('activities') !== victim, 30_000);
    // Far past the old crash loop (5 deaths within a minute of their starts stopped everything).
    while (Date.now() - hungAt < 75_000) {
      expect(sys.launcher.exitCode).toBeNull();
      await sleep(5000);
    }
    // The restarted process waits for the store: it is not dying again and again.
    expect(kills() - killsBefore).toBe(1);
    expect(sys.launcher.output()).not.toMatch(/stopping everything/);
  } finally {
    proxy.restore();
  }
  const backAt = Date.now();
  await waitFor('every process ready once the store is back', everyProcessReady, 30_000);
  expect(Date.now() - backAt).toBeLessThan(30_000);
}, 240_000);
