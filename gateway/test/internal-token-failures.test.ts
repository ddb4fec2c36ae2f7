// /internal/* only on the internal listener; a wrong internal token at the gateway's /internal/* routes counts as
// a failed authentication of its address, as a bad API key does: past
// AUTH_FAILURE_LIMIT the address gets 429 for the rest of the window, and the
// right token is still served.
import { expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import {
  AUTH_FAILURES,
  call,
  expectThrottled,
  gatewayForSuite,
  internalHeaders,
  newTeam,
  type TestGateway,
} from './support.ts';

const LIMIT = 5;
let gw: TestGateway;

gatewayForSuite('internal-token-failures', (started) => void (gw = started.gw), {
  overrides: { trustedProxies: ['127.0.0.1'], authFailureLimit: LIMIT },
});

const from = (address: string) => ({ 'x-forwarded-for': address });

test('when an address keeps guessing the internal token, then past the limit it gets 429 with Retry-After, another address is not affected, and the right token still works', async () => {
  const team = await newTeam(gw.accounts);
  const guesses = await Promise.all(
    Array.from({ length: LIMIT + 3 }, () =>
      call(gw.internalUrl, '/internal/team-owner', {
        headers: { ...internalHeaders(team.team.id, randomBytes(32).toString('hex')), ...from('203.0.113.7') },
      }),
    ),
  );
  const statuses = guesses.map((r) => r.status).sort();
  expect(statuses).toEqual([...Array(LIMIT).fill(404), ...Array(3).fill(429)]);
  for (const throttled of guesses.filter((r) => r.status === 429)) expectThrottled(throttled, AUTH_FAILURES, LIMIT, 60);

  const other = await call(gw.internalUrl, '/internal/users?ids=x', {
    headers: { ...internalHeaders(team.team.id, 'wrong'), ...from('203.0.113.8') },
  });
  expect(other.status).toBe(404);
  const right = await call(gw.internalUrl, '/internal/team-owner', {
    headers: { ...internalHeaders(team.team.id), ...from('203.0.113.7') },
  });
  expect(right.status).toBe(200);
  expect(right.body.data).toMatchObject({ id: team.user.id });
});

test('when /internal/* is asked on the public listener, even with the right token, then 404 Route not found; on the internal listener it answers', async () => {
  const team = await newTeam(gw.accounts);
  for (const path of ['/internal/team-owner', `/internal/users?ids=${team.user.id}`]) {
    const pub = await call(gw.url, path, { headers: internalHeaders(team.team.id) });
    expect({ path, status: pub.status, body: pub.body }).toEqual({
      path,
      status: 404,
      body: { success: false, error: { code: 'NOT_FOUND', message: 'Route not found', details: {} } },
    });
    expect((await call(gw.internalUrl, path, { headers: internalHeaders(team.team.id) })).status).toBe(200);
  }
  // The public API is not served on the internal listener's routes either way: it is the same app, keys still required.
  expect((await call(gw.internalUrl, '/v1/deals')).status).toBe(401);
});
