import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { pino } from 'pino';
import { startTcpProxy, type TcpProxy } from '@lpm/test-kit/tcp-proxy';
import { redisReady } from '@lpm/shared/redis';
import {
  allUpstreams,
  call,
  gatewayForSuite,
  newTeam,
  sleep,
  startGateway,
  type GatewayOverEcho,
  type TestGateway,
} from './support.ts';

let upstream: GatewayOverEcho['upstream'];
let gw: TestGateway;
const keyPrefix = () => `${process.env.REDIS_KEY_PREFIX ?? 'lpm-test:'}gw-limits:`;

gatewayForSuite('limits', (started) => void ({ upstream, gw } = started));

type Res = Awaited<ReturnType<typeof call>>;

function burst(base: string, key: string, n: number): Promise<Res[]> {
  return Promise.all(Array.from({ length: n }, () => call(base, '/v1/deals', { key })));
}

function expectLimitHeaders(res: Res, limit: number) {
  expect(res.headers.get('ratelimit-limit')).toBe(String(limit));
  // Every answered request, let through or refused, has taken its token: fewer than the limit remain.
  expect(res.headers.get('ratelimit-remaining')).toMatch(/^\d+$/);
  expect(Number(res.headers.get('ratelimit-remaining'))).toBeLessThan(limit);
  const reset = Number(res.headers.get('ratelimit-reset'));
  expect(reset).toBeGreaterThanOrEqual(1);
  expect(reset).toBeLessThanOrEqual(60);
}

function expectExactlySixtyOfSeventy(results: Res[]) {
  const ok = results.filter((r) => r.status === 200);
  const refused = results.filter((r) => r.status === 429);
  expect(ok).toHaveLength(60);
  expect(refused).toHaveLength(10);
  for (const r of results) expectLimitHeaders(r, 60);
  expect(ok.map((r) => Number(r.headers.get('ratelimit-remaining'))).sort((a, b) => a - b)).toEqual(
    Array.from({ length: 60 }, (_, i) => i),
  );
  for (const r of refused) {
    expect(r.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(r.headers.get('ratelimit-remaining')).toBe('0');
    const retryAfter = Number(r.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
  }
}

describe('per-team limits', () => {
  test('when a starter team sends 70 concurrent requests, then exactly 60 pass and 10 get 429 with Retry-After', async () => {
    const team = await newTeam(gw.accounts, 'starter');
    expectExactlySixtyOfSeventy(await burst(gw.url, team.apiKey, 70));
  });

  test('when one team is exhausted, then another team is not affected', async () => {
    const [a, b] = [await newTeam(gw.accounts, 'starter'), await newTeam(gw.accounts, 'starter')];
    await burst(gw.url, a.apiKey, 61);
    const res = await call(gw.url, '/v1/deals', { key: b.apiKey });
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit-remaining')).toBe('59');
  });

  test('when a request is refused for its scope, then it still carries the RateLimit headers', async () => {
    const team = await newTeam(gw.accounts, 'professional');
    const readOnly = await gw.accounts.createKey({ teamId: team.team.id, userId: team.user.id, scopes: ['read'] });
    const res = await call(gw.url, '/v1/deals', { method: 'POST', key: readOnly.apiKey, body: '{}' });
    expect(res.status).toBe(403);
    expectLimitHeaders(res, 300);
  });

  test('when the plan changes, then the new limit applies to the next request after the key cache (1 s)', async () => {
    const team = await newTeam(gw.accounts, 'starter');
    await burst(gw.url, team.apiKey, 60);
    expect((await call(gw.url, '/v1/deals', { key: team.apiKey })).status).toBe(429);
    await gw.accounts.setPlan(team.team.id, 'professional');
    await sleep(1050);
    const res = await call(gw.url, '/v1/deals', { key: team.apiKey });
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit-limit')).toBe('300');
    expect(res.headers.get('ratelimit-remaining')).toBe(String(300 - 62));
  });

  test('when a starter team is past its minute limit, then its refused requests are not charged to the day', async () => {
    const team = await newTeam(gw.accounts, 'starter');
    await burst(gw.url, team.apiKey, 70);
    expect(await gw.redis.get(`${keyPrefix()}rl:m:${team.team.id}`)).toBe('70');
    expect(await gw.redis.get(`${keyPrefix()}rl:d:${team.team.id}`)).toBe('60');
  });

  test('when a request is counted in both windows, then it takes one Redis command', async () => {
    const team = await newTeam(gw.accounts, 'starter');
    expect((await call(gw.url, '/v1/deals', { key: team.apiKey })).status).toBe(200);
    const commands: string[] = [];
    const send = gw.redis.sendCommand.bind(gw.redis);
    gw.redis.sendCommand = (command, stream) => (commands.push(command.name), send(command, stream));
    try {
      expect((await call(gw.url, '/v1/deals', { key: team.apiKey })).status).toBe(200);
    } finally {
      gw.redis.sendCommand = send;
    }
    expect(commands).toEqual(['evalsha']);
    expect(await gw.redis.get(`${keyPrefix()}rl:d:${team.team.id}`)).toBe('2');
  });

  test('when a starter team has used its daily quota, then 429 with a Retry-After up to a day', async () => {
    const team = await newTeam(gw.accounts, 'starter');
    expect((await call(gw.url, '/v1/deals', { key: team.apiKey })).status).toBe(200);
    await gw.redis.set(`${keyPrefix()}rl:d:${team.team.id}`, '1000', 'KEEPTTL');
    const res = await call(gw.url, '/v1/deals', { key: team.apiKey });
    expect(res.status).toBe(429);
    expect(res.body.error.details.window).toBe('day');
    expect(res.headers.get('ratelimit-limit')).toBe('60');
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(60);
    expect(retryAfter).toBeLessThanOrEqual(86_400);
  });

  test('when an enterprise team is past any daily count, then it is not capped by day', async () => {
    const team = await newTeam(gw.accounts, 'enterprise');
    await gw.redis.set(`${keyPrefix()}rl:d:${team.team.id}`, '1000000', 'EX', 3600);
    const res = await call(gw.url, '/v1/deals', { key: team.apiKey });
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit-limit')).toBe('1000');
    expect(res.headers.get('ratelimit-remaining')).toBe('999');
  });
});

describe('when Redis is unreachable', () => {
  let proxy: TcpProxy;
  let cut: TestGateway;
  const lines: string[] = [];

  beforeAll(async () => {
    const redisUrl = new URL(process.env.REDIS_URL!);
    proxy = await startTcpProxy(redisUrl.hostname, Number(redisUrl.port || 6379));
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    });
    cut = await startGateway('limits', allUpstreams(upstream.url), {
      redisUrl: `redis://127.0.0.1:${proxy.port}`,
      logger: undefined,
      loggerInstance: pino({ level: 'warn' }, sink),
    });
  });

  afterAll(async () => {
    await cut?.close();
    await proxy?.close();
  });

  test('when Redis is cut, then requests are still served, limited in process, and the fallback is logged once', async () => {
    const team = await newTeam(cut.accounts, 'starter');
    expect(cut.redis.status).toBe('ready');
    proxy.cut();
    expectExactlySixtyOfSeventy(await burst(cut.url, team.apiKey, 70));
    const other = await newTeam(cut.accounts, 'professional');
    expect((await call(cut.url, '/v1/clients', { key: other.apiKey })).status).toBe(200);
    expect(lines.filter((l) => l.includes('rate limits use in-process counters'))).toHaveLength(1);
  });

  test('when Redis comes back, then limits are counted in Redis again', async () => {
    proxy.restore();
    expect(await redisReady(cut.redis, 10_000)).toBe(true);
    const team = await newTeam(cut.accounts, 'starter');
    expect((await call(cut.url, '/v1/deals', { key: team.apiKey })).status).toBe(200);
    expect(await cut.redis.get(`${keyPrefix()}rl:m:${team.team.id}`)).toBe('1');
  });
});
