import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startTcpProxy, type TcpProxy } from '@lpm/test-kit/tcp-proxy';
import { generateApiKey } from '../src/domain/keys.ts';
import {
  allUpstreams,
  AUTH_FAILURES,
  call,
  expectThrottled,
  newTeam,
  openTestStore,
  sleep,
  startEchoUpstream,
  startGateway,
  type TestGateway,
} from './support.ts';

// The test reaches the gateway from 127.0.0.1; gateways trusting it as their proxy
// take the client address from X-Forwarded-For, so each test uses addresses of its own.
let upstream: Awaited<ReturnType<typeof startEchoUpstream>>;
let storeProxy: TcpProxy;
let gw: TestGateway;
let lastOctet = 0;
const nextAddress = () => `198.51.100.${++lastOctet}`;
const from = (address: string) => ({ 'x-forwarded-for': address });
const redisKey = (address: string) =>
  `${process.env.REDIS_KEY_PREFIX ?? 'lpm-test:'}gw-auth-failures:rl:auth:${address}`;

type Res = Awaited<ReturnType<typeof call>>;

const invalidKey = { success: false, error: { code: 'UNAUTHORIZED', message: 'Invalid API key', details: {} } };

function badKeys(base: string, address: string, n: number): Promise<Res[]> {
  return Promise.all(
    Array.from({ length: n }, () => call(base, '/v1/deals', { key: generateApiKey(), headers: from(address) })),
  );
}

/** Exactly `limit` answers 401 Invalid API key, the rest 429 with Retry-After. */
function expectLimitThenThrottled(results: Res[], limit: number, windowSeconds = 60) {
  const statuses: Record<number, number> = {};
  for (const r of results) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
  expect(statuses).toEqual({ 401: limit, 429: results.length - limit });
  for (const r of results) {
    if (r.status === 401) expect(r.body).toEqual(invalidKey);
    else expectThrottled(r, AUTH_FAILURES, limit, windowSeconds);
  }
}

beforeAll(async () => {
  upstream = await startEchoUpstream('all');
  // The store behind a proxy the last test of the first group cuts, to show throttled requests never reach it.
  const mongo = new URL(process.env.MONGO_URL!);
  storeProxy = await startTcpProxy(mongo.hostname, Number(mongo.port));
  const store = await openTestStore('auth-failures', `mongodb://127.0.0.1:${storeProxy.port}/`);
  gw = await startGateway('auth-failures', allUpstreams(upstream.url), { store, trustedProxies: ['127.0.0.1'] });
});

afterAll(async () => {
  storeProxy?.restore();
  await gw?.close();
  await storeProxy?.close();
  await upstream?.app.close();
});

describe('failed authentications per client address', () => {
  test('when one address sends 300 random well-formed bad keys, then 401 up to 50 and 429 with Retry-After after, while its valid key still gets 200 and another address is not throttled', async () => {
    const address = nextAddress();
    const team = await newTeam(gw.accounts, 'enterprise');
    expect((await call(gw.url, '/v1/deals', { key: team.apiKey, headers: from(address) })).status).toBe(200);

    expectLimitThenThrottled(await badKeys(gw.url, address, 300), 50);
    const missing = await call(gw.url, '/v1/deals', { headers: from(address) });
    expectThrottled(missing, AUTH_FAILURES, 50, 60);
    // Counted in Redis, under the run's prefix, for one window.
    expect(Number(await gw.redis.get(redisKey(address)))).toBeGreaterThanOrEqual(300);
    const ttl = await gw.redis.pttl(redisKey(address));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);

    // Past the key cache's second: the valid key is looked up again, and passes.
    await sleep(1050);
    const ok = await call(gw.url, '/v1/deals', { key: team.apiKey, headers: from(address) });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('ratelimit-limit')).toBe('1000');

    const other = nextAddress();
    expect((await call(gw.url, '/v1/deals', { key: generateApiKey(), headers: from(other) })).body).toEqual(invalidKey);
    expect((await call(gw.url, '/v1/deals', { headers: from(other) })).status).toBe(401);
    const newcomer = await newTeam(gw.accounts, 'starter');
    expect((await call(gw.url, '/v1/deals', { key: newcomer.apiKey, headers: from(other) })).status).toBe(200);
  });

  test('when valid keys are used, then they are not counted as failures', async () => {
    const address = nextAddress();
    const team = await newTeam(gw.accounts, 'enterprise');
    for (let i = 0; i < 3; i++) {
      const key = (await gw.accounts.createKey({ teamId: team.team.id, userId: team.user.id, scopes: ['read'] }))
        .apiKey;
      expect((await call(gw.url, '/v1/deals', { key, headers: from(address) })).status).toBe(200);
    }
    expect(Number((await gw.redis.get(redisKey(address))) ?? 0)).toBe(0);
    expectLimitThenThrottled(await badKeys(gw.url, address, 51), 50);
  });

  test('when a key not seen before sends 80 concurrent requests, then all pass: they share one lookup and spend no failure', async () => {
    const address = nextAddress();
    const team = await newTeam(gw.accounts, 'enterprise');
    const results = await Promise.all(
      Array.from({ length: 80 }, () => call(gw.url, '/v1/deals', { key: team.apiKey, headers: from(address) })),
    );
    expect(results.map((r) => r.status)).toEqual(results.map(() => 200));
    expect(Number((await gw.redis.get(redisKey(address))) ?? 0)).toBe(0);
  });

  test('when a key this gateway has not seen comes from a throttled address, then it waits for the window like any unknown key', async () => {
    const address = nextAddress();
    const team = await newTeam(gw.accounts, 'enterprise');
    await badKeys(gw.url, address, 50);
    expectThrottled(
      await call(gw.url, '/v1/deals', { key: team.apiKey, headers: from(address) }),
      AUTH_FAILURES,
      50,
      60,
    );
    expect((await call(gw.url, '/v1/deals', { key: team.apiKey, headers: from(nextAddress()) })).status).toBe(200);
  });

  test('when a throttled client prepends another address to X-Forwarded-For, then the address its proxy saw is still throttled', async () => {
    const address = nextAddress();
    await badKeys(gw.url, address, 50);
    const spoofed = await call(gw.url, '/v1/deals', {
      key: generateApiKey(),
      headers: { 'x-forwarded-for': `203.0.113.9, ${address}` },
    });
    expectThrottled(spoofed, AUTH_FAILURES, 50, 60);
  });

  test('when no proxy is trusted, then a client cannot change its address with X-Forwarded-For', async () => {
    const direct = await startGateway('auth-failures-direct', allUpstreams(upstream.url), {
      authFailureLimit: 5,
      authFailureWindowMs: 30_000,
    });
    try {
      const team = await newTeam(direct.accounts, 'enterprise');
      expect((await call(direct.url, '/v1/deals', { key: team.apiKey })).status).toBe(200);
      const results: Res[] = [];
      for (let i = 0; i < 8; i++)
        results.push(await call(direct.url, '/v1/deals', { key: generateApiKey(), headers: from(nextAddress()) }));
      expectLimitThenThrottled(results, 5, 30);
      expect((await call(direct.url, '/v1/deals', { key: team.apiKey, headers: from(nextAddress()) })).status).toBe(
        200,
      );
    } finally {
      await direct.close();
    }
  });

  test('when an address is throttled, then its bad keys are refused without a store lookup', async () => {
    const address = nextAddress();
    await badKeys(gw.url, address, 50);
    // On a busy machine a lookup can outlast the store timeout (a 503, not a failure): more, until the address is throttled.
    for (
      let i = 0;
      i < 50 && (await call(gw.url, '/v1/deals', { key: generateApiKey(), headers: from(address) })).status !== 429;
      i++
    );
    storeProxy.cut();
    try {
      // A lookup would wait for the cut store and answer 503 after the store timeout (5 s).
      const started = Date.now();
      expectThrottled(
        await call(gw.url, '/v1/deals', { key: generateApiKey(), headers: from(address) }),
        AUTH_FAILURES,
        50,
        60,
      );
      expect(Date.now() - started).toBeLessThan(1000);
      expect((await call(gw.url, '/v1/deals', { key: generateApiKey(), headers: from(nextAddress()) })).status).toBe(
        503,
      );
    } finally {
      storeProxy.restore();
    }
  });
});

describe('when Redis is unreachable', () => {
  let redisProxy: TcpProxy;
  let cut: TestGateway;

  beforeAll(async () => {
    const redisUrl = new URL(process.env.REDIS_URL!);
    redisProxy = await startTcpProxy(redisUrl.hostname, Number(redisUrl.port || 6379));
    cut = await startGateway('auth-failures-cut', allUpstreams(upstream.url), {
      redisUrl: `redis://127.0.0.1:${redisProxy.port}`,
      trustedProxies: ['127.0.0.1'],
    });
  });

  afterAll(async () => {
    await cut?.close();
    await redisProxy?.close();
  });

  test('when Redis is cut, then failed authentications are still throttled, in process', async () => {
    const address = nextAddress();
    const team = await newTeam(cut.accounts, 'enterprise');
    expect(cut.redis.status).toBe('ready');
    redisProxy.cut();
    expect((await call(cut.url, '/v1/deals', { key: team.apiKey, headers: from(address) })).status).toBe(200);
    expectLimitThenThrottled(await badKeys(cut.url, address, 60), 50);
    expect((await call(cut.url, '/v1/deals', { key: team.apiKey, headers: from(address) })).status).toBe(200);
    expect((await call(cut.url, '/v1/deals', { key: generateApiKey(), headers: from(nextAddress()) })).body).toEqual(
      invalidKey,
    );
  });
});
