// A service run as several replicas (`npm start --replicas`): its URL setting lists
// them comma-separated, and the gateway spreads its requests over them; its public
// /health counts the service up while one replica answers.
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { waitFor } from '@lpm/test-kit/wait';
import {
  allUpstreams,
  call,
  newTeam,
  sleep,
  startEchoUpstream,
  startGateway,
  type EchoUpstream,
  type TestGateway,
} from './support.ts';

let a: EchoUpstream;
let b: EchoUpstream;
let gw: TestGateway;

beforeAll(async () => {
  a = await startEchoUpstream('a');
  b = await startEchoUpstream('b');
  gw = await startGateway('replicas', allUpstreams(`${a.url},${b.url}`), { healthTimeoutMs: 3000 });
});

afterAll(async () => {
  await gw?.close();
  await a?.app.close();
  await b?.app.close();
});

test('when a service has two replicas, then the gateway sends requests to both', async () => {
  const { apiKey } = await newTeam(gw.accounts, 'enterprise');
  const served = new Set<string | null>();
  for (let i = 0; i < 20; i++) {
    const res = await call(gw.url, `/v1/clients/cli_${i}`, { key: apiKey });
    expect(res.status).toBe(200);
    served.add(res.headers.get('x-upstream'));
  }
  expect([...served].sort()).toEqual(['a', 'b']);
});

test('when one replica fails its health, then the public /health still counts the service up', async () => {
  b.state.healthStatus = 503;
  try {
    // /health answers from a check up to a second old: a second later, one that saw the replica fail.
    await sleep(1100);
    expect((await call(gw.url, '/health')).status).toBe(200);
    a.state.healthStatus = 503;
    await waitFor(
      '/health to see both replicas fail',
      async () => (await call(gw.url, '/health')).status === 503,
      5000,
    );
  } finally {
    a.state.healthStatus = 200;
    b.state.healthStatus = 200;
  }
});
