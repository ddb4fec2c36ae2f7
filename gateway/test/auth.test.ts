import { beforeAll, describe, expect, test } from '@jest/globals';
import { gatewayRepositories } from '../src/data/store.ts';
import { call, type EchoGateway, echoGatewayForSuite, openTestStore, sleep, type TestGateway } from './support.ts';

let gw: TestGateway;
let owner: EchoGateway['team'];

echoGatewayForSuite('auth', (started) => ({ gw, team: owner } = started));

const unauthorized = (message: string) => ({ success: false, error: { code: 'UNAUTHORIZED', message, details: {} } });
const forbidden = { success: false, error: { code: 'FORBIDDEN', message: 'Insufficient permissions', details: {} } };

describe('API keys', () => {
  test('when no Authorization header is sent, then 401 Missing API key', async () => {
    const res = await call(gw.url, '/v1/deals');
    expect(res.status).toBe(401);
    expect(res.body).toEqual(unauthorized('Missing API key'));
  });

  test('when the header is not a Bearer key, then 401 Invalid API key', async () => {
    for (const authorization of ['Basic abc', `Token ${owner.apiKey}`, 'Bearer', `Bearer ${owner.apiKey} extra`]) {
      const res = await call(gw.url, '/v1/deals', { headers: { authorization } });
      expect([authorization, res.status, res.body]).toEqual([authorization, 401, unauthorized('Invalid API key')]);
    }
  });

  test('when the key is malformed or unknown, then 401 Invalid API key', async () => {
    const unknown = `lpk_${'A'.repeat(40)}`;
    for (const key of ['lpk_short', `${owner.apiKey}x`, unknown]) {
      const res = await call(gw.url, '/v1/deals', { key });
      expect([key, res.status, res.body]).toEqual([key, 401, unauthorized('Invalid API key')]);
    }
  });

  test('when the key is valid, then the request reaches the upstream', async () => {
    const res = await call(gw.url, '/v1/deals?page=2', { key: owner.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ method: 'GET', url: '/v1/deals?page=2' });
  });

  test('when a key is revoked, then it is refused within 1 s', async () => {
    const issued = await gw.accounts.createKey({ teamId: owner.team.id, userId: owner.user.id, scopes: ['read'] });
    expect((await call(gw.url, '/v1/deals', { key: issued.apiKey })).status).toBe(200);
    await gw.accounts.revokeKey(issued.key.id);
    await sleep(1050);
    const res = await call(gw.url, '/v1/deals', { key: issued.apiKey });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(unauthorized('Invalid API key'));
  });

  test('when a key in steady use is revoked, then it is refused within 1 s all the same', async () => {
    const issued = await gw.accounts.createKey({ teamId: owner.team.id, userId: owner.user.id, scopes: ['read'] });
    // Used every 50 ms for 1.5 s: its cache entry is refreshed ahead of its expiry.
    for (let i = 0; i < 30; i++) {
      expect((await call(gw.url, '/v1/deals', { key: issued.apiKey })).status).toBe(200);
      await sleep(50);
    }
    await gw.accounts.revokeKey(issued.key.id);
    const revokedAt = Date.now();
    while (Date.now() - revokedAt < 1050) {
      await call(gw.url, '/v1/deals', { key: issued.apiKey });
      await sleep(50);
    }
    const res = await call(gw.url, '/v1/deals', { key: issued.apiKey });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(unauthorized('Invalid API key'));
  });

  test('when a revoked key is revoked again, then its first revocation time stays and the change is announced again', async () => {
    const store = await openTestStore('auth');
    try {
      const { changes } = gatewayRepositories(store.db);
      const issued = await gw.accounts.createKey({ teamId: owner.team.id, userId: owner.user.id, scopes: ['read'] });
      const first = await gw.accounts.revokeKey(issued.key.id);
      const before = await changes.version();
      const again = await gw.accounts.revokeKey(issued.key.id);
      expect(again.revoked_at).toEqual(first.revoked_at);
      expect(await changes.version()).toBe(before + 1);
    } finally {
      await store.close();
    }
  });

  test('when a key is created, then it works at once', async () => {
    const unknownFirst = await gw.accounts.createKey({
      teamId: owner.team.id,
      userId: owner.user.id,
      scopes: ['read'],
    });
    expect((await call(gw.url, '/v1/clients', { key: unknownFirst.apiKey })).status).toBe(200);
  });

  test('when no key is sent to an unknown route, then the answer is a clean error envelope', async () => {
    const res = await call(gw.url, '/nowhere');
    expect(res.status).toBe(401);
    expect(res.body).toEqual(unauthorized('Missing API key'));
    expect(res.headers.get('x-request-id')).toBeTruthy();
  });

  test('when a valid key asks for an unknown route, then 404 Route not found', async () => {
    const res = await call(gw.url, '/v1/nowhere', { key: owner.apiKey });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, error: { code: 'NOT_FOUND', message: 'Route not found', details: {} } });
    expect(res.headers.get('ratelimit-limit')).toBe('1000');
  });
});

describe('scopes', () => {
  let readOnly: string;
  let readWrite: string;
  let adminOnly: string;

  beforeAll(async () => {
    const mk = async (scopes: string[]) =>
      (await gw.accounts.createKey({ teamId: owner.team.id, userId: owner.user.id, scopes })).apiKey;
    readOnly = await mk(['read']);
    readWrite = await mk(['read', 'write']);
    adminOnly = await mk(['admin']);
  });

  test('when a read-only key writes, then 403 Insufficient permissions', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const res = await call(gw.url, '/v1/cases/case_1', {
        method,
        key: readOnly,
        body: method === 'DELETE' ? undefined : '{}',
      });
      expect([method, res.status, res.body]).toEqual([method, 403, forbidden]);
    }
    expect((await call(gw.url, '/v1/cases', { key: readOnly })).status).toBe(200);
  });

  test('when a read/write key reads or writes, then both pass', async () => {
    expect((await call(gw.url, '/v1/cases', { key: readWrite })).status).toBe(200);
    const res = await call(gw.url, '/v1/cases', { method: 'POST', key: readWrite, body: '{"title":"x"}' });
    expect(res.status).toBe(200);
    expect(res.body.data.method).toBe('POST');
  });

  test('when a key without admin calls webhooks or settings, then 403 whatever the method', async () => {
    for (const [method, path] of [
      ['GET', '/v1/webhooks'],
      ['POST', '/v1/webhooks'],
      ['GET', '/v1/settings'],
      ['PUT', '/v1/settings'],
      ['GET', '/v1/%77ebhooks'],
    ]) {
      const res = await call(gw.url, path, { method, key: readWrite, body: method === 'GET' ? undefined : '{}' });
      expect([method, path, res.status, res.body]).toEqual([method, path, 403, forbidden]);
    }
  });

  test('when an admin key calls webhooks or settings, then webhooks are proxied and settings answered by the gateway', async () => {
    const hooks = await call(gw.url, '/v1/webhooks', { key: adminOnly });
    expect(hooks.status).toBe(200);
    expect(hooks.body.data.url).toBe('/v1/webhooks');
    const settings = await call(gw.url, '/v1/settings', { key: adminOnly });
    expect(settings.status).toBe(200);
    expect(settings.body.data.timezone).toBe('America/Sao_Paulo');
    const changed = await call(gw.url, '/v1/settings', {
      method: 'PUT',
      key: owner.apiKey,
      body: '{"timezone":"UTC"}',
    });
    expect(changed.status).toBe(200);
    expect(changed.body.data.timezone).toBe('UTC');
  });

  test('when an admin-only key calls another domain, then 403', async () => {
    const res = await call(gw.url, '/v1/deals', { key: adminOnly });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(forbidden);
  });
});
