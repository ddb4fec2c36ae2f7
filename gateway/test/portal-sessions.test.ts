// Webhooks portal sessions through a real gateway over the run's store and Redis,
// in front of an upstream that echoes what it got: what opening one answers, that
// its token reaches the webhooks routes as its team's admin and no other route,
// revocation and expiry, and the CSP of the /portal page it opens.
import { describe, expect, test } from '@jest/globals';
import { HEADER, readIdentity } from '@lpm/shared/identity';
import { expectError } from '@lpm/test-kit/api';
import { gatewayRepositories } from '../src/data/store.ts';
import { generatePortalToken, keyDigest } from '../src/domain/keys.ts';
import { call, gatewayForSuite, INTERNAL_TOKEN, newTeam, sleep, type TestGateway } from './support.ts';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const MINUTE = 60_000;

let gw: TestGateway;

gatewayForSuite('portal', (started) => void (gw = started.gw), { echo: 'services' });

const open = (key: string, body: unknown = {}) =>
  call(gw.url, '/v1/webhooks/portal-sessions', { method: 'POST', key, body: JSON.stringify(body) });
const revoke = (key: string, id: string) =>
  call(gw.url, `/v1/webhooks/portal-sessions/${id}`, { method: 'DELETE', key });

async function opened(key: string, body: unknown = {}) {
  const res = await open(key, body);
  expect(res.status).toBe(201);
  return res.body.data as { id: string; url: string; token: string; expires_at: string };
}

describe('POST /v1/webhooks/portal-sessions', () => {
  test('when an admin key opens a session, then it answers the page URL with the token in its fragment, the token once, and an expiry 60 minutes on', async () => {
    const team = await newTeam(gw.accounts);
    const before = Date.now();
    const session = await opened(team.apiKey);
    expect(session).toEqual({
      id: expect.stringMatching(/^psn_[0-9a-z]{26}$/),
      url: expect.any(String),
      token: expect.stringMatching(/^lpp_[0-9A-Za-z]{40}$/),
      expires_at: expect.stringMatching(ISO_MS),
    });
    expect(session.url).toBe(`${gw.url}/portal?session=${session.id}#token=${session.token}`);
    const lasts = Date.parse(session.expires_at) - before;
    expect(lasts).toBeGreaterThan(60 * MINUTE - 2000);
    expect(lasts).toBeLessThanOrEqual(60 * MINUTE + 1000);
    const stored = await gw.store.db.collection('portal_sessions').findOne({ _id: session.id as never });
    expect(stored).toMatchObject({
      team_id: team.team.id,
      user_id: team.user.id,
      digest: keyDigest(session.token),
      revoked_at: null,
    });
    expect(JSON.stringify(stored)).not.toContain(session.token);
  });

  test('when expires_in_minutes is 1440, then the session lasts a day; outside 5..1440, then 400', async () => {
    const team = await newTeam(gw.accounts);
    const session = await opened(team.apiKey, { expires_in_minutes: 1440 });
    expect(Date.parse(session.expires_at) - Date.now()).toBeGreaterThan(1439 * MINUTE);
    for (const bad of [4, 1441, 10.5, '60']) {
      expectError(
        await open(team.apiKey, { expires_in_minutes: bad }),
        400,
        'VALIDATION_ERROR',
        'expires_in_minutes must be an integer from 5 to 1440',
      );
    }
  });

  test('when a key without the admin scope opens a session, then 403', async () => {
    const team = await newTeam(gw.accounts);
    const issued = await gw.accounts.createKey({
      teamId: team.team.id,
      userId: team.user.id,
      scopes: ['read', 'write'],
    });
    expectError(await open(issued.apiKey), 403, 'FORBIDDEN', 'Insufficient permissions');
  });
});

describe('a portal session token', () => {
  test('when it calls the webhooks routes, then they are reached as its team and user with the admin scope', async () => {
    const team = await newTeam(gw.accounts);
    const { token } = await opened(team.apiKey);
    for (const [method, path] of [
      ['GET', '/v1/webhooks'],
      ['GET', '/v1/webhooks/event-types'],
      ['POST', '/v1/webhooks/wh_x/deliveries/dlv_y/retry'],
      ['DELETE', '/v1/webhooks/wh_x'],
    ]) {
      const res = await call(gw.url, path, { method, key: token, body: method === 'POST' ? '{}' : undefined });
      expect(res.status).toBe(200);
      expect(res.body.data.url).toBe(path);
      const identity = readIdentity(res.body.data.headers, INTERNAL_TOKEN);
      expect(identity).toMatchObject({
        teamId: team.team.id,
        userId: team.user.id,
        scopes: ['read', 'write', 'admin'],
      });
      expect(res.body.data.headers.authorization).toBeUndefined();
      expect(res.body.data.headers[HEADER.teamId]).toBe(team.team.id);
    }
  });

  test('when it calls any route outside /v1/webhooks, or the portal sessions themselves, then 401 in the envelope', async () => {
    const team = await newTeam(gw.accounts);
    const session = await opened(team.apiKey);
    const message = 'A portal session token is valid only for the webhooks routes';
    for (const [method, path] of [
      ['GET', '/v1/clients'],
      ['GET', '/v1/settings'],
      ['PUT', '/v1/settings'],
      ['GET', '/v1/webhooksx'],
      ['GET', '/v1/nothing-here'],
    ]) {
      expectError(
        await call(gw.url, path, { method, key: session.token, body: method === 'PUT' ? '{}' : undefined }),
        401,
        'UNAUTHORIZED',
        message,
      );
    }
    expectError(await open(session.token), 401, 'UNAUTHORIZED', message);
    expectError(await revoke(session.token, session.id), 401, 'UNAUTHORIZED', message);
    expect((await call(gw.url, '/v1/webhooks', { key: session.token })).status).toBe(200);
  });

  test('when its session is revoked, then within a second the token is refused; a second revocation answers the first time', async () => {
    const team = await newTeam(gw.accounts);
    const session = await opened(team.apiKey);
    expect((await call(gw.url, '/v1/webhooks', { key: session.token })).status).toBe(200);
    const res = await revoke(team.apiKey, session.id);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ id: session.id, revoked_at: expect.stringMatching(ISO_MS) });
    await sleep(1100);
    expectError(await call(gw.url, '/v1/webhooks', { key: session.token }), 401, 'UNAUTHORIZED', 'Invalid API key');
    expect((await revoke(team.apiKey, session.id)).body.data).toEqual(res.body.data);
  });

  test("when another team's session or an unknown one is revoked, then 404 and the session still works", async () => {
    const team = await newTeam(gw.accounts);
    const other = await newTeam(gw.accounts);
    const session = await opened(team.apiKey);
    expectError(await revoke(other.apiKey, session.id), 404, 'NOT_FOUND', 'Portal session not found');
    expectError(
      await revoke(team.apiKey, 'psn_01jd3k0000000000000000000'),
      404,
      'NOT_FOUND',
      'Portal session not found',
    );
    expect((await call(gw.url, '/v1/webhooks', { key: session.token })).status).toBe(200);
  });

  test('when its session expires, then its token is refused, whether its principal is still cached or not', async () => {
    const team = await newTeam(gw.accounts);
    const sessions = gatewayRepositories(gw.store.db).portalSessions;
    const token = generatePortalToken();
    const now = Date.now();
    const record = {
      team_id: team.team.id,
      user_id: team.user.id,
      digest: keyDigest(token),
      created_at: new Date(now),
      revoked_at: null,
    };
    await sessions.insert({ ...record, _id: 'psn_01jd3k0000000000000000001', expires_at: new Date(now + 1500) });
    expect((await call(gw.url, '/v1/webhooks', { key: token })).status).toBe(200);
    await sleep(1600);
    // A principal still cached says why; one looked up again is not found at all.
    const refused = await call(gw.url, '/v1/webhooks', { key: token });
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('UNAUTHORIZED');
    expect(['Portal session expired', 'Invalid API key']).toContain(refused.body.error.message);

    const expired = generatePortalToken();
    await sessions.insert({
      ...record,
      digest: keyDigest(expired),
      _id: 'psn_01jd3k0000000000000000002',
      expires_at: new Date(now - 1000),
    });
    expectError(await call(gw.url, '/v1/webhooks', { key: expired }), 401, 'UNAUTHORIZED', 'Invalid API key');
  });
});

describe('GET /portal', () => {
  const frameAncestors = (csp: string | null) => /frame-ancestors ([^;]+)/.exec(csp ?? '')?.[1];

  test("when the page of a live session is asked for, then it is served with a CSP that reaches only its origin and lets the team's allowed origins frame it", async () => {
    const team = await newTeam(gw.accounts);
    const session = await opened(team.apiKey);
    const page = await fetch(`${gw.url}/portal?session=${session.id}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = page.headers.get('content-security-policy');
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(frameAncestors(csp)).toBe("'none'");
    expect(await page.text()).not.toMatch(/(src|href)="(https?:)?\/\//);

    const put = await call(gw.url, '/v1/settings', {
      method: 'PUT',
      key: team.apiKey,
      body: JSON.stringify({ portal: { allowed_origins: ['https://App.Example.com:443', 'http://localhost:3000'] } }),
    });
    expect(put.status).toBe(200);
    expect(put.body.data.portal).toEqual({ allowed_origins: ['https://app.example.com', 'http://localhost:3000'] });
    expect((await call(gw.url, '/v1/settings', { key: team.apiKey })).body.data.portal).toEqual({
      allowed_origins: ['https://app.example.com', 'http://localhost:3000'],
    });
    const framed = await fetch(`${gw.url}/portal?session=${session.id}`);
    expect(frameAncestors(framed.headers.get('content-security-policy'))).toBe(
      'https://app.example.com http://localhost:3000',
    );

    await revoke(team.apiKey, session.id);
    expect(
      frameAncestors((await fetch(`${gw.url}/portal?session=${session.id}`)).headers.get('content-security-policy')),
    ).toBe("'none'");
    expect(
      frameAncestors((await fetch(`${gw.url}/portal?session=nonsense`)).headers.get('content-security-policy')),
    ).toBe("'none'");
  });

  test('when an origin with a path, a wildcard or another scheme is set, then 400', async () => {
    const team = await newTeam(gw.accounts);
    for (const origin of [
      'https://a.example.com/app',
      'https://*.example.com',
      'ftp://a.example.com',
      "https://a.example.com 'unsafe-inline'",
    ]) {
      const res = await call(gw.url, '/v1/settings', {
        method: 'PUT',
        key: team.apiKey,
        body: JSON.stringify({ portal: { allowed_origins: [origin] } }),
      });
      expectError(res, 400, 'VALIDATION_ERROR', 'Invalid origin');
    }
  });

  test("when the page's scripts and style are asked for, then they are served from this gateway; any other name is 404", async () => {
    for (const name of [
      'app.js',
      'api.js',
      'ui.js',
      'endpoints.js',
      'endpoint.js',
      'deliveries.js',
      'catalog.js',
      'portal.css',
    ]) {
      const res = await fetch(`${gw.url}/portal/assets/${name}`);
      expect(res.status).toBe(200);
      // No import, stylesheet or request of another host (the URL placeholder of a form field is text).
      expect(await res.text()).not.toMatch(/(from |import\(|url\(|fetch\()\s*['"`]?(https?:)?\/\//);
    }
    expect((await fetch(`${gw.url}/portal/assets/..%2Fapp.ts`)).status).toBe(404);
    expect((await fetch(`${gw.url}/portal/assets/index.html`)).status).toBe(404);
  });
});
