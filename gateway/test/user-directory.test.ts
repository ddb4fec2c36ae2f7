// The gateway's internal directory routes (/internal/team-owner, /internal/users)
// and the UserDirectory client the services ask them through.
import { createServer, type Server } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, jest, test } from '@jest/globals';
import { AppError } from '@lpm/shared/errors';
import { HEADER } from '@lpm/shared/identity';
import { newId } from '@lpm/shared/ids';
import { freePort } from '../../scripts/local-store.ts';
import { UserDirectory } from '@lpm/shared/upstream/user-directory';
import {
  call,
  fetchedUrl,
  INTERNAL_TOKEN,
  internalHeaders,
  ownerOf,
  twoTeamsGatewayForSuite,
  type TestGateway,
  type TwoTeamsGateway,
} from './support.ts';
import { listenOnLoopback } from '@lpm/test-kit/listen';

let gw: TestGateway;
let teamA: TwoTeamsGateway['teamA'];
let teamB: TwoTeamsGateway['teamB'];
let alice: TwoTeamsGateway['alice'];

twoTeamsGatewayForSuite('user_directory', (started) => ({ gw, teamA, teamB, alice } = started));

const directory = (opts: Partial<ConstructorParameters<typeof UserDirectory>[0]> = {}) =>
  new UserDirectory({ gatewayUrl: gw.internalUrl, internalToken: INTERNAL_TOKEN, ...opts });

describe('GET /internal/team-owner', () => {
  test("when called with the internal token, then it answers the team's owner", async () => {
    const a = await call(gw.internalUrl, '/internal/team-owner', { headers: internalHeaders(teamA.team.id) });
    expect([a.status, a.body]).toEqual([200, { success: true, data: ownerOf(teamA) }]);
    const b = await call(gw.internalUrl, '/internal/team-owner', { headers: internalHeaders(teamB.team.id) });
    expect(b.body).toEqual({ success: true, data: ownerOf(teamB) });
  });

  test('when the team does not exist, then 404 Team not found', async () => {
    const res = await call(gw.internalUrl, '/internal/team-owner', { headers: internalHeaders(newId('team')) });
    expect([res.status, res.body]).toEqual([
      404,
      { success: false, error: { code: 'NOT_FOUND', message: 'Team not found', details: {} } },
    ]);
  });
});

describe('GET /internal/users', () => {
  test('when called with the internal token, then it answers the team users among the ids, without unknown or foreign ones', async () => {
    const ids = [alice.id, teamA.user.id, teamB.user.id, newId('user'), 'not-an-id'].join(',');
    const res = await call(gw.internalUrl, `/internal/users?ids=${encodeURIComponent(ids)}`, {
      headers: internalHeaders(teamA.team.id),
    });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.data.sort((a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id))).toEqual(
      [alice, ownerOf(teamA)].sort((a, b) => a.id.localeCompare(b.id)),
    );
  });

  test('when another team asks for the same ids, then it sees only its own users', async () => {
    const res = await call(gw.internalUrl, `/internal/users?ids=${alice.id},${teamB.user.id}`, {
      headers: internalHeaders(teamB.team.id),
    });
    expect(res.body).toEqual({ success: true, data: [ownerOf(teamB)] });
  });

  test('when more than 100 ids are asked for, then 400; when ids is missing, then 400', async () => {
    const ids = Array.from({ length: 101 }, () => newId('user')).join(',');
    const tooMany = await call(gw.internalUrl, `/internal/users?ids=${ids}`, {
      headers: internalHeaders(teamA.team.id),
    });
    expect([tooMany.status, tooMany.body.error]).toEqual([
      400,
      {
        code: 'VALIDATION_ERROR',
        message: 'ids must have at most 100 items',
        details: { field: 'ids', type: 'invalid' },
      },
    ]);
    const missing = await call(gw.internalUrl, '/internal/users', { headers: internalHeaders(teamA.team.id) });
    expect([missing.status, missing.body.error.message]).toEqual([400, 'ids is required']);
  });
});

describe('the internal directory routes', () => {
  test('when the internal token is missing or wrong, or no team is given, then 404 Route not found, before any validation and without touching the limits', async () => {
    const unknownRoute = await call(gw.internalUrl, '/internal/nothing-here', { key: teamB.apiKey });
    expect(unknownRoute.body).toEqual({
      success: false,
      error: { code: 'NOT_FOUND', message: 'Route not found', details: {} },
    });
    const attempts: Record<string, string>[] = [
      {},
      internalHeaders(teamA.team.id, 'wrong-token-wrong-token'),
      { [HEADER.internalToken]: INTERNAL_TOKEN },
      { authorization: `Bearer ${teamA.apiKey}` },
      { authorization: `Bearer ${teamA.apiKey}`, [HEADER.teamId]: teamA.team.id },
    ];
    const paths = [
      '/internal/team-owner',
      `/internal/users?ids=${alice.id}`,
      '/internal/users',
      `/internal/users?ids=${'x,'.repeat(200)}`,
    ];
    for (const headers of attempts) {
      for (const path of paths) {
        const res = await call(gw.internalUrl, path, { headers });
        expect([res.status, res.body]).toEqual([404, unknownRoute.body]);
        expect(res.headers.get('ratelimit-limit')).toBeNull();
      }
    }
  });

  test('when called, then they need no API key and do not count toward the team limits', async () => {
    for (const path of ['/internal/team-owner', `/internal/users?ids=${alice.id}`]) {
      const res = await call(gw.internalUrl, path, { headers: internalHeaders(teamA.team.id) });
      expect([res.status, res.headers.get('ratelimit-limit')]).toEqual([200, null]);
    }
    const viaApi = await call(gw.url, '/v1/deals', { key: teamA.apiKey });
    expect(viaApi.headers.get('ratelimit-remaining')).toBe('59');
  });
});

describe('UserDirectory.owner', () => {
  test('when the team exists, then its owner; asked again, the gateway is asked again (no cache)', async () => {
    const fetchSpy = jest.spyOn(globalThis, 'fetch');
    try {
      const users = directory();
      expect(await users.owner(teamA.team.id)).toEqual(ownerOf(teamA));
      expect(await users.owner(teamA.team.id)).toEqual(ownerOf(teamA));
      expect(await users.owner(teamB.team.id)).toEqual(ownerOf(teamB));
      expect(fetchSpy.mock.calls.map(([url]) => fetchedUrl(url).pathname)).toEqual(
        Array(3).fill('/internal/team-owner'),
      );
    } finally {
      fetchSpy.mockRestore();
    }
  });

  test('when the team does not exist or the id is not a team id, then null', async () => {
    const users = directory();
    expect(await users.owner(newId('team'))).toBeNull();
    expect(await users.owner('not-a-team\r\nx-evil: 1')).toBeNull();
  });
});

describe('UserDirectory', () => {
  let fetchSpy: jest.Spied<typeof fetch>;
  /** The ids of each request the directory made to the gateway. */
  const directoryRequests = (): string[][] =>
    fetchSpy.mock.calls
      .map(([url]) => fetchedUrl(url))
      .filter((url) => url.pathname === '/internal/users')
      .map((url) => url.searchParams.get('ids')!.split(','));

  beforeAll(() => {
    fetchSpy = jest.spyOn(globalThis, 'fetch');
  });
  afterEach(() => {
    fetchSpy.mockClear();
  });
  afterAll(() => fetchSpy.mockRestore());

  test('when users are found, then the map holds them by id, and a second call is answered from the cache', async () => {
    const users = directory();
    const unknown = newId('user');
    const first = await users.find(teamA.team.id, [alice.id, teamA.user.id, unknown, teamB.user.id]);
    expect(Object.fromEntries(first)).toEqual({ [alice.id]: alice, [teamA.user.id]: ownerOf(teamA) });
    expect(directoryRequests()).toHaveLength(1);

    fetchSpy.mockClear();
    const second = await users.find(teamA.team.id, [alice.id, teamA.user.id]);
    expect(Object.fromEntries(second)).toEqual(Object.fromEntries(first));
    expect(directoryRequests()).toEqual([]);
  });

  test('when ids were not found, then they are asked again (a user created since is found)', async () => {
    const users = directory();
    await users.find(teamA.team.id, [alice.id]);
    fetchSpy.mockClear();
    const bob = await gw.accounts.createUser({
      teamId: teamA.team.id,
      name: 'Bob',
      email: `bob-${Date.now()}@example.com`,
    });
    const found = await users.find(teamA.team.id, [alice.id, bob.id]);
    expect(found.get(bob.id)).toEqual({ id: bob.id, name: 'Bob', email: bob.email });
    expect(directoryRequests()).toEqual([[bob.id]]);
  });

  test('when the same user id is asked for by another team, then the cache does not answer for it', async () => {
    const users = directory();
    await users.find(teamA.team.id, [alice.id]);
    expect((await users.find(teamB.team.id, [alice.id])).size).toBe(0);
  });

  test('when the cache entry is older than cacheTtlMs, then the gateway is asked again', async () => {
    const users = directory({ cacheTtlMs: 50 });
    await users.find(teamA.team.id, [alice.id]);
    await new Promise((r) => setTimeout(r, 80));
    await users.find(teamA.team.id, [alice.id]);
    expect(directoryRequests()).toHaveLength(2);
  });

  test('when more than 100 ids are missing, then they are asked for in batches of 100', async () => {
    const ids = [alice.id, ...Array.from({ length: 150 }, () => newId('user'))];
    const found = await directory().find(teamA.team.id, ids);
    expect([...found.keys()]).toEqual([alice.id]);
    expect(directoryRequests().map((batch) => batch.length)).toEqual([100, 51]);
  });

  test('when no id is shaped like a user id, then the gateway is not asked', async () => {
    expect((await directory().find(teamA.team.id, ['', 'a,b', `${alice.id},x`, 'cli_123'])).size).toBe(0);
    expect(directoryRequests()).toEqual([]);
  });
});

describe.each([
  ['owner', (users: UserDirectory) => users.owner(teamA.team.id)],
  ['find', (users: UserDirectory) => users.find(teamA.team.id, [alice.id])],
])('UserDirectory.%s', (_method, ask) => {
  test('when the gateway is down, then 503 SERVICE_UNAVAILABLE', async () => {
    const err = await ask(directory({ gatewayUrl: `http://127.0.0.1:${await freePort()}` })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({
      status: 503,
      code: 'SERVICE_UNAVAILABLE',
      message: 'The gateway service is unavailable',
    });
  });

  test('when the gateway refuses the token, then 503, not an empty answer', async () => {
    const users = directory({ internalToken: 'not-the-internal-token' });
    await expect(ask(users)).rejects.toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
  });

  test('when the gateway does not answer in time, then 503', async () => {
    const silent: Server = createServer(() => {});
    const port = await listenOnLoopback(silent, 'silent gateway');
    try {
      const users = directory({ gatewayUrl: `http://127.0.0.1:${port}`, timeoutMs: 200 });
      await expect(ask(users)).rejects.toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
    } finally {
      silent.closeAllConnections();
      await new Promise((r) => silent.close(r));
    }
  });
});
