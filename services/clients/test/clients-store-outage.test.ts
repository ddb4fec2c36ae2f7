// The store failing fast (its connections cut and refused): requests get 503 in
// the envelope within 10 s, never a 500 or a hang, and succeed again once it is back.
import { startTcpProxy, type TcpProxy } from '@lpm/test-kit/tcp-proxy';
import { waitFor } from '@lpm/test-kit/wait';
import { expectError } from '@lpm/test-kit/api';
import { identity } from '@lpm/test-kit/teams';
import { startClients, type ClientsUnderTest } from './helper.ts';

let proxy: TcpProxy;
let sut: ClientsUnderTest;
const who = identity();

beforeAll(async () => {
  const store = new URL(process.env.MONGO_URL!);
  proxy = await startTcpProxy(store.hostname, Number(store.port));
  const viaProxy = new URL(store);
  viaProxy.port = String(proxy.port);
  sut = await startClients({ mongoUrl: viaProxy.toString() });
});

afterAll(async () => {
  proxy.restore();
  await sut.close();
  await proxy.close();
});

test('when the store is gone, then reads and writes are 503 within 10 s; when it is back, then they succeed', async () => {
  const created = await sut.call(who, { method: 'POST', url: '/v1/clients', payload: { type: 'PF', name: 'Ana' } });
  expect(created.statusCode).toBe(201);
  const id = created.json().data.id;

  proxy.cut();
  for (const request of [
    { method: 'GET' as const, url: `/v1/clients/${id}` },
    { method: 'POST' as const, url: '/v1/clients', payload: { type: 'PF', name: 'Bia' } },
    { method: 'PUT' as const, url: `/v1/clients/${id}`, payload: { name: 'Ana Souza' } },
  ]) {
    const started = Date.now();
    const res = await sut.call(who, request);
    expect(Date.now() - started).toBeLessThan(10_000);
    expectError(res, 503, 'SERVICE_UNAVAILABLE', 'Service unavailable');
    expect(res.headers['x-request-id']).toEqual(expect.any(String));
  }

  proxy.restore();
  await waitFor(
    'the store back',
    async () => (await sut.call(who, { method: 'GET', url: `/v1/clients/${id}` })).statusCode === 200,
    30_000,
  );
  const renamed = await sut.call(who, { method: 'PUT', url: `/v1/clients/${id}`, payload: { name: 'Ana Souza' } });
  expect(renamed.statusCode).toBe(200);
  expect((await sut.call(who, { method: 'GET', url: `/v1/clients/${id}` })).json().data.name).toBe('Ana Souza');
}, 60_000);
