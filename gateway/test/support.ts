// Real servers for gateway tests: the gateway on an ephemeral port, over the test
// run's FerretDB and Redis, in front of small Fastify upstreams that echo what they got.
import { randomBytes } from 'node:crypto';
import { expect } from '@jest/globals';
import Fastify, { type FastifyInstance } from 'fastify';
import { HEADER } from '@lpm/shared/identity';
import { SERVICE_NAMES } from '@lpm/shared/service/names';
import type { Redis } from 'ioredis';
import { buildGatewayApp, type GatewayDeps } from '../src/app.ts';
import { internalServer } from '../src/internal-listener.ts';
import type { Upstreams } from '../src/config.ts';
import { gatewayRepositories, openGatewayStore } from '../src/data/store.ts';
import { Accounts } from '../src/domain/accounts.ts';
import { createRedis, redisReady } from '@lpm/shared/redis';
import { assertWholeAnswers, checkWholeAnswers } from '@lpm/test-kit/whole-answers';
import type { JsonAnswer } from '@lpm/test-kit/json';
import type { Store } from '@lpm/shared/store/orm';

export const INTERNAL_TOKEN = randomBytes(32).toString('hex');

export interface Echo {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  bodyBytes: number;
}

export interface EchoUpstream {
  url: string;
  app: FastifyInstance;
  state: { healthStatus: number; healthChecks: number };
}

/** An upstream answering every path with what it received (paths ending in /hang never answer); /health answers `healthStatus` (0: never), counted in `healthChecks`. */
export async function startEchoUpstream(name: string): Promise<EchoUpstream> {
  const app = Fastify({ logger: false, bodyLimit: 8 * 1024 * 1024, forceCloseConnections: true });
  const state = { healthStatus: 200, healthChecks: 0 };
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  app.get('/health', async (_req, reply) => {
    state.healthChecks++;
    return state.healthStatus === 0
      ? new Promise(() => {})
      : reply.status(state.healthStatus).send({ success: state.healthStatus === 200 });
  });
  // After a team's time zone or court calendar changed, the gateway tells the services; none has records to rewrite here.
  for (const path of ['/internal/time-zone', '/internal/court-calendar'])
    app.post(path, async () => ({ success: true, data: { done: true, changed: 0 } }));
  app.all('/*', async (req, reply) => {
    if (req.url.endsWith('/hang')) return new Promise(() => {});
    const echo: Echo = {
      method: req.method,
      url: req.url,
      headers: req.headers,
      bodyBytes: Buffer.isBuffer(req.body) ? req.body.length : 0,
    };
    reply.header('x-upstream', name);
    return { success: true, data: echo };
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, app, state };
}

export interface TestGateway {
  app: FastifyInstance;
  url: string;
  /** The listener of /internal/* (the services' GATEWAY_URL). */
  internalUrl: string;
  accounts: Accounts;
  redis: Redis;
  /** The store the gateway reads and writes (opened for it unless given). */
  store: Store;
  close(): Promise<void>;
}

export function testDbPrefix(file: string): string {
  return `${process.env.MONGO_DB_PREFIX ?? 'lpm_'}${file}_`;
}

/** The gateway's store on this test file's databases (`file`), at `url`: the test run's store unless given. */
export function openTestStore(file: string, url = process.env.MONGO_URL!): Promise<Store> {
  return openGatewayStore({ url, dbPrefix: testDbPrefix(file) });
}

/** Before the suite's tests: the gateway's store on this test file's databases, handed to `ready`; closed after them. */
export function storeForSuite(file: string, ready: (store: Store) => void): void {
  let store: Store | undefined;
  beforeAll(async () => {
    store = await openTestStore(file);
    ready(store);
  });
  afterAll(async () => {
    await store?.close();
  });
}

/** The accounts of a store a test opened itself, not through a gateway. */
export const accountsOf = (store: Store) => new Accounts(gatewayRepositories(store.db));

/** A gateway over the test run's stores; `file` keeps this test file's data apart. */
export async function startGateway(
  file: string,
  upstreams: Upstreams,
  overrides: Partial<GatewayDeps> & { redisUrl?: string } = {},
): Promise<TestGateway> {
  const { redisUrl, ...rest } = overrides;
  const store = rest.store ?? (await openTestStore(file));
  const redis = createRedis(redisUrl ?? process.env.REDIS_URL!, 'lpm-gateway-limits');
  await redisReady(redis, 5000);
  const app = buildGatewayApp({
    redis,
    redisKeyPrefix: `${process.env.REDIS_KEY_PREFIX ?? 'lpm-test:'}gw-${file}:`,
    internalToken: INTERNAL_TOKEN,
    upstreams,
    logger: false,
    ...rest,
    store,
  });
  const answers = checkWholeAnswers(app);
  const internal = internalServer(app);
  try {
    await app.listen({ port: 0, host: '127.0.0.1' });
    await new Promise<void>((resolve, reject) => internal.once('error', reject).listen(0, '127.0.0.1', resolve));
  } catch (e) {
    await app.close();
    throw e;
  }
  const { port } = app.server.address() as { port: number };
  const internalUrl = `http://127.0.0.1:${(internal.address() as { port: number }).port}`;
  return {
    app,
    url: `http://127.0.0.1:${port}`,
    internalUrl,
    accounts: accountsOf(store),
    redis,
    store,
    close: async () => {
      await app.close();
      assertWholeAnswers(answers);
    },
  };
}

/** Every upstream name pointing at one base URL. */
export function allUpstreams(base: string): Upstreams {
  return Object.fromEntries(SERVICE_NAMES.map((n) => [n, base])) as Upstreams;
}

export async function call(
  base: string,
  path: string,
  init: { method?: string; key?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: Headers; body: JsonAnswer }> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...init.headers };
  if (init.key) headers.authorization = `Bearer ${init.key}`;
  const res = await fetch(`${base}${path}`, { method: init.method ?? 'GET', headers, body: init.body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

/** A per-address limiter's 429: what its body says, and why. */
export interface Throttle {
  message: string;
  reason: string;
}

/** What an address throttled for failed authentications (bad keys or internal tokens) is told. */
export const AUTH_FAILURES: Throttle = { message: 'Too many failed authentications', reason: 'auth_failures' };

/** A 429 of `throttle` with `limit` spent: Retry-After within the window, repeated in the body and in RateLimit-Reset. */
export function expectThrottled(
  res: Awaited<ReturnType<typeof call>>,
  throttle: Throttle,
  limit: number,
  windowSeconds: number,
): void {
  expect(res.status).toBe(429);
  expect(res.body).toEqual({
    success: false,
    error: {
      code: 'RATE_LIMIT_EXCEEDED',
      message: throttle.message,
      details: { reason: throttle.reason, retry_after: expect.any(Number) },
    },
  });
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(windowSeconds);
  expect(res.body.error.details.retry_after).toBe(retryAfter);
  expect(res.headers.get('ratelimit-limit')).toBe(String(limit));
  expect(res.headers.get('ratelimit-remaining')).toBe('0');
  expect(res.headers.get('ratelimit-reset')).toBe(String(retryAfter));
}

export async function newTeam(accounts: Accounts, plan = 'starter') {
  const suffix = Math.random().toString(36).slice(2, 8);
  return accounts.createTeam({
    name: `Team ${suffix}`,
    plan,
    ownerName: 'Owner',
    ownerEmail: `owner-${suffix}@example.com`,
  });
}

export { sleep } from '@lpm/test-kit/wait';

/** The headers a service sends to the gateway's internal routes. */
export const internalHeaders = (teamId: string, token = INTERNAL_TOKEN) => ({
  [HEADER.internalToken]: token,
  [HEADER.teamId]: teamId,
});

/** A team's owner as the directory answers it. */
export const ownerOf = (t: { user: { id: string; name: string; email: string } }) => ({
  id: t.user.id,
  name: t.user.name,
  email: t.user.email,
});

/** The URL a fetch was called with (its first argument, whichever form). */
export const fetchedUrl = (input: string | URL | Request): URL => new URL(input instanceof Request ? input.url : input);

export interface GatewayOverEcho {
  upstream: EchoUpstream;
  gw: TestGateway;
}

/**
 * Before the suite's tests: an echo upstream (named `echo`) for every service and a
 * gateway (`file`, with `overrides`) in front of it, handed to `ready` (awaited);
 * closed after them.
 */
export function gatewayForSuite(
  file: string,
  ready: (started: GatewayOverEcho) => void | Promise<void>,
  options: { echo?: string; overrides?: Parameters<typeof startGateway>[2] } = {},
): void {
  let upstream: GatewayOverEcho['upstream'] | undefined;
  let gw: TestGateway | undefined;
  beforeAll(async () => {
    upstream = await startEchoUpstream(options.echo ?? 'all');
    gw = await startGateway(file, allUpstreams(upstream.url), options.overrides);
    await ready({ upstream, gw });
  });
  afterAll(async () => {
    await gw?.close();
    await upstream?.app.close();
  });
}

export interface EchoGateway extends GatewayOverEcho {
  team: Awaited<ReturnType<typeof newTeam>>;
}

/**
 * Before the suite's tests: an echo upstream for every service, a gateway (`file`)
 * in front of it and an enterprise team, handed to `ready`; closed after them.
 */
export function echoGatewayForSuite(file: string, ready: (started: EchoGateway) => void): void {
  gatewayForSuite(file, async ({ upstream, gw }) =>
    ready({ upstream, gw, team: await newTeam(gw.accounts, 'enterprise') }),
  );
}

export interface TwoTeamsGateway {
  gw: TestGateway;
  teamA: Awaited<ReturnType<typeof newTeam>>;
  teamB: Awaited<ReturnType<typeof newTeam>>;
  /** A user of team A beside its owner, so the owner is not merely its only user. */
  alice: { id: string; name: string; email: string };
}

/**
 * Before the suite's tests: an echo upstream for every service, a gateway (`file`)
 * in front of it, two starter teams and Alice in the first, handed to `ready`;
 * closed after them.
 */
export function twoTeamsGatewayForSuite(file: string, ready: (started: TwoTeamsGateway) => void): void {
  gatewayForSuite(file, async ({ gw }) => {
    const teamA = await newTeam(gw.accounts, 'starter');
    const teamB = await newTeam(gw.accounts, 'starter');
    const user = { teamId: teamA.team.id, name: 'Alice Souza', email: 'alice@example.com' };
    const created = await gw.accounts.createUser(user);
    ready({ gw, teamA, teamB, alice: { id: created.id, name: created.name, email: created.email } });
  });
}
