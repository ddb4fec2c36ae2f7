import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { freePort, isListening } from '../../scripts/local-store.ts';
import { SERVICE_NAMES, SERVICE_PORTS } from '@lpm/shared/service/names';
import { ConfigError } from '@lpm/shared/config';
import { CONFIG_ERROR_EXIT } from '@lpm/shared/service/process';
import { readGatewayConfig } from '../src/config.ts';
import { waitFor } from '@lpm/test-kit/wait';
import {
  accountsOf,
  call,
  INTERNAL_TOKEN,
  internalHeaders,
  newTeam,
  openTestStore,
  sleep,
  startEchoUpstream,
  testDbPrefix,
  type EchoUpstream,
} from './support.ts';

const ROOT = resolve(import.meta.dirname, '../..');

describe('configuration', () => {
  test('when only the required settings are given, then the documented defaults apply', () => {
    const c = readGatewayConfig({ MONGO_URL: 'mongodb://127.0.0.1:27017/', INTERNAL_TOKEN: INTERNAL_TOKEN });
    expect(c).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      dbPrefix: 'lpm_',
      redisUrl: 'redis://127.0.0.1:6379',
      redisKeyPrefix: 'lpm:',
      logLevel: 'info',
    });
    for (const [name, port] of Object.entries(SERVICE_PORTS))
      expect(c.upstreams[name as keyof typeof c.upstreams]).toBe(`http://127.0.0.1:${port}`);
  });

  test('when GATEWAY_SERVICES names some services, then only they are deployed; all six by default', () => {
    const base = { MONGO_URL: 'mongodb://127.0.0.1:27017/', INTERNAL_TOKEN: INTERNAL_TOKEN };
    expect(readGatewayConfig(base).deployed).toEqual(Object.keys(SERVICE_PORTS));
    expect(readGatewayConfig({ ...base, GATEWAY_SERVICES: 'clients, cases' }).deployed).toEqual(['clients', 'cases']);
    expect(() => readGatewayConfig({ ...base, GATEWAY_SERVICES: 'clients,billing' })).toThrow(
      /GATEWAY_SERVICES: unknown services: billing/,
    );
  });

  test('when INTERNAL_PORT is unset, then /internal/* listens on 8087 of 127.0.0.1; set to PORT, the config is refused', () => {
    const base = { MONGO_URL: 'mongodb://127.0.0.1:27017/', INTERNAL_TOKEN: INTERNAL_TOKEN };
    expect(readGatewayConfig(base)).toMatchObject({ internalPort: 8087, internalHost: '127.0.0.1' });
    expect(readGatewayConfig({ ...base, INTERNAL_PORT: '9001', INTERNAL_HOST: '0.0.0.0' })).toMatchObject({
      internalPort: 9001,
      internalHost: '0.0.0.0',
    });
    expect(() => readGatewayConfig({ ...base, PORT: '9000', INTERNAL_PORT: '9000' })).toThrow(
      /INTERNAL_PORT: must differ from PORT \(9000\)/,
    );
  });

  test('when the failed-authentication settings are unset, then no proxy is trusted and 50 failures a minute are allowed', () => {
    const c = readGatewayConfig({ MONGO_URL: 'mongodb://127.0.0.1:27017/', INTERNAL_TOKEN: INTERNAL_TOKEN });
    expect(c).toMatchObject({ trustedProxies: [], authFailureLimit: 50, authFailureWindowMs: 60_000 });
  });

  test('when TRUSTED_PROXIES and the failure limits are set, then they are read, and bad values are refused naming each', () => {
    const base = { MONGO_URL: 'mongodb://127.0.0.1:27017/', INTERNAL_TOKEN: INTERNAL_TOKEN };
    const set = (env: Record<string, string>) => readGatewayConfig({ ...base, ...env });
    expect(set({ TRUSTED_PROXIES: '10.0.0.0/8, 127.0.0.1,::1/128, loopback' }).trustedProxies).toEqual([
      '10.0.0.0/8',
      '127.0.0.1',
      '::1/128',
      'loopback',
    ]);
    expect(set({ TRUSTED_PROXIES: '2' }).trustedProxies).toBe(2);
    expect(set({ AUTH_FAILURE_LIMIT: '10', AUTH_FAILURE_WINDOW: '5m' })).toMatchObject({
      authFailureLimit: 10,
      authFailureWindowMs: 300_000,
    });
    expect(() => set({ TRUSTED_PROXIES: '10.0.0.0/8,proxy.local' })).toThrow(
      /TRUSTED_PROXIES: is not an address, CIDR or hop count: proxy.local/,
    );
    expect(() => set({ TRUSTED_PROXIES: '10.0.0.0/40' })).toThrow(/TRUSTED_PROXIES/);
    expect(() => set({ TRUSTED_PROXIES: '11' })).toThrow(/TRUSTED_PROXIES: a hop count must be from 0 to 10/);
    expect(() => set({ AUTH_FAILURE_LIMIT: '0' })).toThrow(/AUTH_FAILURE_LIMIT/);
    expect(() => set({ AUTH_FAILURE_WINDOW: '1500ms' })).toThrow(/AUTH_FAILURE_WINDOW: must be whole seconds/);
    expect(() => set({ AUTH_FAILURE_WINDOW: 'soon' })).toThrow(/AUTH_FAILURE_WINDOW/);
  });

  test('when the public-route limit is unset, then 120 requests a minute per address; set, it is read, and bad values are refused naming each', () => {
    const base = { MONGO_URL: 'mongodb://127.0.0.1:27017/', INTERNAL_TOKEN: INTERNAL_TOKEN };
    expect(readGatewayConfig(base)).toMatchObject({ publicRateLimit: 120, publicRateWindowMs: 60_000 });
    expect(readGatewayConfig({ ...base, PUBLIC_RATE_LIMIT: '30', PUBLIC_RATE_WINDOW: '10s' })).toMatchObject({
      publicRateLimit: 30,
      publicRateWindowMs: 10_000,
    });
    expect(() => readGatewayConfig({ ...base, PUBLIC_RATE_LIMIT: '0' })).toThrow(/PUBLIC_RATE_LIMIT/);
    expect(() => readGatewayConfig({ ...base, PUBLIC_RATE_LIMIT: 'many' })).toThrow(/PUBLIC_RATE_LIMIT/);
    expect(() => readGatewayConfig({ ...base, PUBLIC_RATE_WINDOW: '500ms' })).toThrow(
      /PUBLIC_RATE_WINDOW: must be whole seconds/,
    );
  });

  test('when MONGO_URL or INTERNAL_TOKEN is missing or an upstream URL is bad, then the config is refused naming each', () => {
    let error: unknown;
    try {
      readGatewayConfig({ DEALS_URL: 'not a url' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    for (const name of ['MONGO_URL', 'INTERNAL_TOKEN', 'DEALS_URL']) expect((error as Error).message).toContain(name);
  });
});

describe('server.ts', () => {
  let upstream: EchoUpstream;

  beforeAll(async () => {
    upstream = await startEchoUpstream('all');
  });

  afterAll(async () => {
    await upstream?.app.close();
  });

  test('when MONGO_URL does not parse, then it exits 78 (a configuration error) with one fatal JSON line naming it, its password shown as ***', async () => {
    const password = 'pa#ss-wrd-4tbvq';
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NODE_OPTIONS: '',
      INTERNAL_TOKEN,
      LOG_LEVEL: 'info',
      MONGO_URL: `mongodb://lpm:${password}@h1:27017,h2:27017/db?replicaSet=rs`,
    };
    const child = spawn(process.execPath, [join(ROOT, 'gateway/src/server.ts')], { cwd: ROOT, env });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    expect(await new Promise<number | null>((done) => child.on('close', (code) => done(code)))).toBe(CONFIG_ERROR_EXIT);
    const lines = output.trim().split('\n');
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]) as { level: number; msg: string };
    expect(line.level).toBe(60);
    expect(line.msg).toContain(
      'MONGO_URL: is not a URL (Password contains unescaped characters): mongodb://lpm:***@h1:27017,h2:27017/db?replicaSet=rs',
    );
    expect(output).not.toContain('4tbvq');
  });

  test('when started with its env, then it serves, logs only JSON lines and stops cleanly on SIGTERM', async () => {
    const port = await freePort();
    const internalPort = await freePort();
    const dbPrefix = testDbPrefix('server');
    const store = await openTestStore('server');
    const team = await newTeam(accountsOf(store));
    await store.close();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NODE_OPTIONS: '',
      PORT: String(port),
      INTERNAL_PORT: String(internalPort),
      MONGO_DB_PREFIX: dbPrefix,
      REDIS_KEY_PREFIX: `${process.env.REDIS_KEY_PREFIX}gw-server:`,
      INTERNAL_TOKEN,
      LOG_LEVEL: 'info',
    };
    for (const name of SERVICE_NAMES) env[`${name.toUpperCase()}_URL`] = upstream.url;
    const child = spawn(process.execPath, [join(ROOT, 'gateway/src/server.ts')], { cwd: ROOT, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const exited = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
    try {
      // Up to 30 s: a cold start of the process takes seconds on a busy 2-core machine, and it
      // listens before its store is set up (its health answers 503 until then).
      for (let i = 0; i < 300 && !(await isListening(port)); i++) await sleep(100);
      const base = `http://127.0.0.1:${port}`;
      await waitFor('the gateway ready', async () => (await call(base, '/health')).status === 200, 30_000);
      const res = await call(base, '/v1/deals', { key: team.apiKey });
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-limit')).toBe('60');
      // /internal/* on the internal listener only.
      for (let i = 0; i < 150 && !(await isListening(internalPort)); i++) await sleep(100);
      const owner = { headers: internalHeaders(team.team.id) };
      expect((await call(`http://127.0.0.1:${internalPort}`, '/internal/team-owner', owner)).status).toBe(200);
      expect((await call(base, '/internal/team-owner', owner)).status).toBe(404);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(stderr).toBe('');
    const lines = stdout.trim().split('\n');
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    expect(lines.some((l) => JSON.parse(l).msg === 'stopping')).toBe(true);
  });
});
