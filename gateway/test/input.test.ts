// Hostile URLs through the gateway: the same envelope and X-Request-Id as every
// other error, and nothing reaches an upstream.
import { expect, test } from '@jest/globals';
import { expectError, rawRequest, rawSocketRequest } from '@lpm/test-kit/api';
import { type EchoGateway, echoGatewayForSuite, type TestGateway } from './support.ts';

let gw: TestGateway;
let team: EchoGateway['team'];

echoGatewayForSuite('input', (started) => ({ gw, team } = started));

const raw = (path: string, opts: { key?: string; method?: string } = {}) =>
  rawRequest(new URL(gw.url).port, path, {
    method: opts.method,
    headers: opts.key ? { authorization: `Bearer ${opts.key}` } : {},
  });

function expectRefused(res: Awaited<ReturnType<typeof raw>>, message: string) {
  expectError(res, 400, 'VALIDATION_ERROR', message);
  expect(res.headers['x-request-id']).toEqual(expect.any(String));
  expect(res.headers['x-upstream']).toBeUndefined();
}

/** What a path no route has gets (a dot segment, a NUL): the answer to an unknown route, and nothing upstream. */
function expectNoRoute(res: Awaited<ReturnType<typeof raw>>) {
  expectError(res, 404, 'NOT_FOUND', 'Route not found');
  expect(res.headers['x-request-id']).toEqual(expect.any(String));
  expect(res.headers['x-upstream']).toBeUndefined();
}

test.each([
  ['a path whose percent-encoding is cut short', '/v1/clients/%E0%A4%A'],
  ['a path with % not followed by hex digits', '/v1/cases/%zz/comments'],
  ['a query whose percent-encoding is cut short', '/v1/clients?search=%E0%A4%A'],
  ['a query with a bare %', '/v1/deals?search=100%'],
])(
  'when a proxied request has %s, then 400 Invalid URL encoding in the envelope with X-Request-Id',
  async (_case, path) => {
    expectRefused(await raw(path, { key: team.apiKey }), 'Invalid URL encoding');
    expectRefused(await raw(path, { key: team.apiKey, method: 'POST' }), 'Invalid URL encoding');
  },
);

test.each([
  ['a .. segment into an admin-only domain', '/v1/clients/../webhooks'],
  ['a final .. segment', '/v1/clients/..'],
  ['a percent-encoded .. segment', '/v1/clients/%2e%2e/webhooks'],
  ['.. between backslashes, towards the internal routes', '/v1/clients/x\\..\\..\\internal\\clients'],
  ['a . segment', '/v1/cases/./cas_1'],
  ['an encoded slash and .. (which the proxy library refuses)', '/v1/clients/a%2F..%2Fb'],
  ['a segment starting with ..', '/v1/clients/..cli_1'],
  ['an encoded NUL', '/v1/clients/cli_%00'],
])(
  'when a proxied path has %s (which no route has), then 404 Route not found in the envelope with X-Request-Id',
  async (_case, path) => {
    expectNoRoute(await raw(path, { key: team.apiKey }));
  },
);

test('when a bad URL comes without a key, then it is refused as a bad URL all the same (not a 401), in the envelope', async () => {
  expectRefused(await raw('/v1/clients/%E0%A4%A'), 'Invalid URL encoding');
  expectNoRoute(await raw('/v1/clients/../webhooks'));
});

test('when a gateway route of its own gets a bad URL, then the same envelope', async () => {
  expectRefused(await raw('/v1/settings?x=%E0%A4%A', { key: team.apiKey }), 'Invalid URL encoding');
  expectNoRoute(await raw('/v1/settings/..', { key: team.apiKey }));
});

test('when the URL is well encoded with dots inside a segment, then it is proxied as sent', async () => {
  const res = await raw('/v1/clients/cli_a.b..c?search=Jos%C3%A9', { key: team.apiKey });
  expect(res.status).toBe(200);
  expect(res.headers['x-upstream']).toBe('all');
  expect(res.body.data.url).toBe('/v1/clients/cli_a.b..c?search=Jos%C3%A9');
});

test('when Node refuses to parse the request line, then 400 in the envelope with X-Request-Id', async () => {
  const res = await rawSocketRequest(new URL(gw.url).port, 'GET foo\r\n\r\n');
  expectError(res, 400, 'VALIDATION_ERROR', 'Malformed HTTP request');
  expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
});
