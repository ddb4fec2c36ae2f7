import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { freePort } from '../../scripts/local-store.ts';
import { startTcpProxy } from '@lpm/test-kit/tcp-proxy';
import { SERVICE_NAMES } from '@lpm/shared/service/names';
import {
  allUpstreams,
  call,
  newTeam,
  openTestStore,
  startEchoUpstream,
  startGateway,
  type EchoUpstream,
  type TestGateway,
} from './support.ts';

// Long enough for a store ping on a CI machine busy with other suites; a hanging
// upstream or a cut store still takes only this long to be called down.
const HEALTH_TIMEOUT_MS = 3000;

let up: EchoUpstream;
let sick: EchoUpstream;

beforeAll(async () => {
  up = await startEchoUpstream('up');
  sick = await startEchoUpstream('sick');
  sick.state.healthStatus = 503;
});

afterAll(async () => {
  await up?.app.close();
  await sick?.app.close();
});

async function withGateway(upstreams: ReturnType<typeof allUpstreams>, fn: (gw: TestGateway) => Promise<void>) {
  const gw = await startGateway('health', upstreams, { healthTimeoutMs: HEALTH_TIMEOUT_MS });
  try {
    await fn(gw);
  } finally {
    await gw.close();
  }
}

describe('GET /health', () => {
  test('when the store and every upstream answer, then 200 without any key', async () => {
    await withGateway(allUpstreams(up.url), async (gw) => {
      const res = await call(gw.url, '/health');
      expect(res.status).toBe(200);
      const services = Object.fromEntries(['store', ...SERVICE_NAMES].map((n) => [n, 'ok']));
      expect(res.body).toEqual({ success: true, data: { status: 'ok', services } });
      expect(res.headers.get('ratelimit-limit')).toBeNull();
    });
  });

  test('when an upstream is unhealthy or down, then 503 naming each one', async () => {
    const dead = `http://127.0.0.1:${await freePort()}`;
    await withGateway({ ...allUpstreams(up.url), cases: sick.url, webhooks: dead }, async (gw) => {
      const res = await call(gw.url, '/health');
      expect(res.status).toBe(503);
      expect(res.body.success).toBe(false);
      expect(res.body.error.code).toBe('SERVICE_UNAVAILABLE');
      expect(res.body.error.details.down).toEqual(['cases', 'webhooks']);
      expect(res.body.error.details.services).toMatchObject({
        store: 'ok',
        deals: 'ok',
        cases: 'down',
        webhooks: 'down',
      });
    });
  });

  test('when only some services are deployed, then /health waits for those alone', async () => {
    const dead = `http://127.0.0.1:${await freePort()}`;
    const gw = await startGateway(
      'health',
      { ...allUpstreams(dead), clients: up.url },
      { healthTimeoutMs: HEALTH_TIMEOUT_MS, deployed: ['clients'] },
    );
    try {
      const res = await call(gw.url, '/health');
      expect(res.status).toBe(200);
      expect(res.body.data.services).toEqual({ store: 'ok', clients: 'ok' });
    } finally {
      await gw.close();
    }
  });

  test('when an upstream hangs, then /health still answers 503 in time', async () => {
    const hanging = await startEchoUpstream('hanging');
    hanging.state.healthStatus = 0;
    try {
      await withGateway({ ...allUpstreams(up.url), financial: hanging.url }, async (gw) => {
        const res = await call(gw.url, '/health');
        expect(res.status).toBe(503);
        expect(res.body.error.details.down).toEqual(['financial']);
      });
    } finally {
      await hanging.app.close();
    }
  });
});

describe('when the store is unreachable', () => {
  test('when the store is cut, then /health answers 503 naming the store and keys get 503, not 401', async () => {
    const mongo = new URL(process.env.MONGO_URL!);
    const proxy = await startTcpProxy(mongo.hostname, Number(mongo.port));
    const store = await openTestStore('health', `mongodb://127.0.0.1:${proxy.port}/`);
    const gw = await startGateway('health', allUpstreams(up.url), {
      store,
      healthTimeoutMs: HEALTH_TIMEOUT_MS,
      storeTimeoutMs: 500,
    });
    try {
      const team = await newTeam(gw.accounts, 'starter');
      proxy.cut();
      const health = await call(gw.url, '/health');
      expect(health.status).toBe(503);
      expect(health.body.error.details.down).toEqual(['store']);
      const res = await call(gw.url, '/v1/deals', { key: team.apiKey });
      expect(res.status).toBe(503);
      expect(res.body.error).toEqual({ code: 'SERVICE_UNAVAILABLE', message: 'Service unavailable', details: {} });
    } finally {
      proxy.restore();
      await gw.close();
      await proxy.close();
    }
  });
});
