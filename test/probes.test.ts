// Probes that mean what they say. The whole system runs with its store and
// its broker each behind a TCP proxy this test controls (the shared servers are never
// stopped). Cutting either makes readiness fail within 10 s on every process that
// needs it, while liveness keeps passing (a restart would not bring the store back);
// once restored, every process is ready again. The gateway serves its probes on its
// internal listener only; its public port keeps `/health` and has no probes.
import { SERVICE_NAMES } from '../shared/src/service/names.ts';
import { internalPort, servicePort } from '../shared/src/service/port-layout.ts';
import { proxyInFrontOf } from '@lpm/test-kit/proxied-url';
import type { TcpProxy } from '@lpm/test-kit/tcp-proxy';
import { waitFor } from '@lpm/test-kit/wait';
import { startRunningSystem, type RunningSystem } from '@lpm/test-kit/running-system';

let storeProxy: TcpProxy;
let brokerProxy: TcpProxy;
let sys: RunningSystem;

/** Each process and the port its probes answer on (shared/src/service/port-layout.ts). */
const processes = () => [
  ...SERVICE_NAMES.map((name) => ({ name, port: servicePort(sys.base, name) })),
  { name: 'gateway', port: internalPort(sys.base) },
];

async function probe(port: number, path: string): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(5000) });
  await res.body?.cancel();
  return res.status;
}

/** name -> status of `path` on every process. */
async function everyProbe(path: string): Promise<Record<string, number>> {
  const all = processes();
  const statuses = await Promise.all(all.map((p) => probe(p.port, path)));
  return Object.fromEntries(all.map((p, i) => [p.name, statuses[i]]));
}

const all = (status: number, names = processes().map((p) => p.name)) =>
  Object.fromEntries(names.map((n) => [n, status]));

beforeAll(async () => {
  const store = await proxyInFrontOf(process.env.MONGO_URL!);
  const broker = await proxyInFrontOf(process.env.AMQP_URL!, 5672);
  storeProxy = store.proxy;
  brokerProxy = broker.proxy;
  sys = await startRunningSystem('probes', { MONGO_URL: store.url, AMQP_URL: broker.url });
}, 120_000);

afterAll(async () => {
  storeProxy?.restore();
  brokerProxy?.restore();
  await sys?.stop();
  await storeProxy?.close();
  await brokerProxy?.close();
});

/** Every process ready within `ms` (waited for as `what`), and live. */
async function expectEveryReady(what: string, ms: number): Promise<void> {
  await waitFor(what, async () => Object.values(await everyProbe('/health/ready')).every((s) => s === 200), ms);
  expect(await everyProbe('/health/live')).toEqual(all(200));
}

/**
 * With `proxy` cut: within 10 s every process's readiness is what `cutReady` says
 * (waited for as `what`), the deals service names `part` among what is down, and
 * every process stays live; once restored, every process is ready again.
 */
async function expectCutSeen(
  proxy: TcpProxy,
  what: string,
  cutReady: (name: string) => number,
  part: string,
): Promise<void> {
  proxy.cut();
  try {
    const cutAt = Date.now();
    await waitFor(
      what,
      async () => Object.entries(await everyProbe('/health/ready')).every(([n, s]) => s === cutReady(n)),
      10_000,
    );
    expect(Date.now() - cutAt).toBeLessThan(10_000);
    const res = await fetch(`http://127.0.0.1:${servicePort(sys.base, 'deals')}/health/ready`);
    expect(((await res.json()) as { error: { details: { down: string[] } } }).error.details.down).toContain(part);
    expect(await everyProbe('/health/live')).toEqual(all(200));
  } finally {
    proxy.restore();
  }
  await expectEveryReady('every process ready again', 60_000);
}

test('when everything is up, then every process is live and ready, and the gateway public port serves /health but no probes', async () => {
  await expectEveryReady('every process ready', 30_000);
  expect(await probe(sys.base, '/health')).toBe(200);
  expect(await probe(sys.base, '/health/live')).toBe(404);
  expect(await probe(sys.base, '/health/ready')).toBe(404);
}, 60_000);

test('when the store is cut, then every process turns not ready within 10 s while staying live, and ready again once it is back', async () => {
  await expectCutSeen(storeProxy, 'every process not ready', () => 503, 'store');
}, 120_000);

test('when the broker is cut, then every service turns not ready within 10 s while staying live, the gateway (no broker) stays ready, and all are ready once it is back', async () => {
  await expectCutSeen(brokerProxy, 'every service not ready', (n) => (n === 'gateway' ? 200 : 503), 'broker');
}, 120_000);
