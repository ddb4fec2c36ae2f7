import { createServer, type Server } from 'node:http';
import { describe, expect, jest, test } from '@jest/globals';
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

twoTeamsGatewayForSuite('team_owner', (started) => ({ gw, teamA, teamB } = started));

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

  test('when the internal token is missing or wrong, or no team is given, then 404 Route not found, without touching the limits', async () => {
    const unknownRoute = await call(gw.internalUrl, '/internal/nothing-here', { key: teamB.apiKey });
    const attempts: Record<string, string>[] = [
      {},
      internalHeaders(teamA.team.id, 'wrong-token-wrong-token'),
      { [HEADER.internalToken]: INTERNAL_TOKEN },
      { authorization: `Bearer ${teamA.apiKey}` },
      { authorization: `Bearer ${teamA.apiKey}`, [HEADER.teamId]: teamA.team.id },
    ];
    for (const headers of attempts) {
      const res = await call(gw.internalUrl, '/internal/team-owner', { headers });
      expect([res.status, res.body]).toEqual([404, unknownRoute.body]);
      expect(res.headers.get('ratelimit-limit')).toBeNull();
    }
    const viaApi = await call(gw.url, '/v1/deals', { key: teamA.apiKey });
    expect(viaApi.headers.get('ratelimit-remaining')).toBe('59');
  });
});

describe('UserDirectory.owner', () => {
  const directory = (opts: Partial<ConstructorParameters<typeof UserDirectory>[0]> = {}) =>
    new UserDirectory({ gatewayUrl: gw.internalUrl, internalToken: INTERNAL_TOKEN, ...opts });

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

  test('when the gateway is down, then 503 SERVICE_UNAVAILABLE', async () => {
    const users = directory({ gatewayUrl: `http://127.0.0.1:${await freePort()}` });
    const err = await users.owner(teamA.team.id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({
      status: 503,
      code: 'SERVICE_UNAVAILABLE',
      message: 'The gateway service is unavailable',
    });
  });

  test('when the gateway refuses the token, then 503, not null', async () => {
    const users = directory({ internalToken: 'not-the-internal-token' });
    await expect(users.owner(teamA.team.id)).rejects.toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
  });

  test('when the gateway does not answer in time, then 503', async () => {
    const silent: Server = createServer(() => {});
    const port = await listenOnLoopback(silent, 'silent gateway');
    try {
      const users = directory({ gatewayUrl: `http://127.0.0.1:${port}`, timeoutMs: 200 });
      await expect(users.owner(teamA.team.id)).rejects.toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
    } finally {
      silent.closeAllConnections();
      await new Promise((r) => silent.close(r));
    }
  });
});
