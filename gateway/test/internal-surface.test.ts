// Issue 39 §1: the internal routes (/internal/*, /metrics, /metrics/commands/<trace>,
// the probes) are served by the internal listener only, whatever the spelling of the
// request target on the public port: the router decodes the path and reads
// absolute-form targets, so the decision is made on the route the router matched.
// Requests are written byte for byte on a raw socket (fetch would normalise them). And
// the headers only the gateway may set for a service never pass from a public caller.
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { COUNT_COMMANDS_HEADER } from '@lpm/shared/counted-requests';
import { HEADER } from '@lpm/shared/identity';
import { startTelemetry, type Telemetry } from '@lpm/shared/telemetry';
import { call, gatewayForSuite, INTERNAL_TOKEN, internalHeaders, newTeam, type TestGateway } from './support.ts';

let gw: TestGateway;
let team: Awaited<ReturnType<typeof newTeam>>;
let telemetry: Telemetry;

beforeAll(() => {
  // As in the gateway's process: requests run in their trace's context, where the counting lives.
  telemetry = startTelemetry({ serviceName: 'internal-surface-test' });
});

gatewayForSuite(
  'internal-surface',
  async (started) => {
    gw = started.gw;
    team = await newTeam(gw.accounts, 'enterprise');
  },
  // Every spelling of an unknown path without a key is a failed authentication (401): not the point here.
  { overrides: { authFailureLimit: 10_000 } },
);

afterAll(async () => {
  await telemetry?.shutdown();
});

interface RawAnswer {
  status: number;
  body: string;
}

/** One request written as given (request line and headers) on a new connection, and its answer. */
function raw(base: string, requestLine: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  const { hostname, port } = new URL(base);
  const head = [
    requestLine,
    'Host: x',
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    'Connection: close',
    '',
    '',
  ].join('\r\n');
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(head));
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
      const chunked = /\r\ntransfer-encoding: chunked\r\n/i.test(text.slice(0, split + 2));
      resolve({ status, body: chunked ? dechunk(text.slice(split + 4)) : text.slice(split + 4) });
    });
  });
}

function dechunk(s: string): string {
  let out = '';
  for (let at = 0; ;) {
    const eol = s.indexOf('\r\n', at);
    const size = parseInt(s.slice(at, eol), 16);
    if (!size) return out;
    out += s.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
}

const hex = (c: string, upper: boolean) => `%${c.charCodeAt(0).toString(16)[upper ? 'toUpperCase' : 'toLowerCase']()}`;

/** `path` with the first letter of its segment `n` (1: the first) percent-encoded. */
const encodeLetterOf = (path: string, n: number, upper: boolean) => {
  const segments = path.split('/');
  segments[n] = hex(segments[n][0], upper) + segments[n].slice(1);
  return segments.join('/');
};

/** Ways to write the request target of `path` that a router, a proxy or a URL parser may read as `path`. */
const SPELLINGS: [string, (path: string) => string][] = [
  ['first letter, upper-case hex', (p) => encodeLetterOf(p, 1, true)],
  ['first letter, lower-case hex', (p) => encodeLetterOf(p, 1, false)],
  ['last segment letter encoded', (p) => encodeLetterOf(p, p.split('/').length - 1, true)],
  [
    'every character encoded',
    (p) =>
      p
        .split('/')
        .map((s) => [...s].map((c) => hex(c, true)).join(''))
        .join('/'),
  ],
  ['slashes encoded', (p) => `/${p.slice(1).replaceAll('/', '%2F')}`],
  ['leading slash encoded', (p) => `/%2F${p.slice(1)}`],
  ['double-encoded letter', (p) => encodeLetterOf(p, 1, true).replace('%', '%25')],
  ['absolute form', (p) => `http://x${p}`],
  ['absolute form, upper-case scheme and a port', (p) => `HTTP://127.0.0.1:80${p}`],
  ['absolute form, https', (p) => `https://x${p}`],
  ['absolute form, encoded letter', (p) => `http://x${encodeLetterOf(p, 1, false)}`],
  ['absolute form, no path slash', (p) => `http://x${p}?`],
  ['doubled slash', (p) => `/${p}`],
  ['doubled slash inside', (p) => p.replace(/\/([^/]*)$/, '//$1')],
  ['dot segment', (p) => `/.${p}`],
  ['dot segment inside', (p) => p.replace(/\/([^/]*)$/, '/./$1')],
  ['trailing dot segment', (p) => `${p}/.`],
  ['encoded dot segment', (p) => `/%2E${p}`],
  ['dot-dot segment', (p) => `/a/..${p}`],
  ['dot-dot segment from the root', (p) => `/..${p}`],
  ['encoded dot-dot segment', (p) => `/a/%2e%2e${p}`],
  ['half-encoded dot-dot segment', (p) => `/a/.%2E${p}`],
  ['trailing dot-dot segment', (p) => `${p}/x/..`],
  ['dot-dot segment between backslashes', (p) => `/a\\..${p.replaceAll('/', '\\')}`],
  ['dot-dot segment, absolute form', (p) => `http://x/a/..${p}`],
  ['backslash', (p) => p.replaceAll('/', '\\')],
  ['upper case', (p) => p.toUpperCase()],
  ['first letter upper case', (p) => `/${p[1].toUpperCase()}${p.slice(2)}`],
  ['trailing slash', (p) => `${p}/`],
  ['trailing ?', (p) => `${p}?`],
  ['trailing #', (p) => `${p}#`],
  ['fragment', (p) => `${p}#x`],
  ['query', (p) => `${p}?a=1&b=2`],
  ['; parameter', (p) => `${p};a=1`],
  ['encoded ;', (p) => `${p}%3Ba=1`],
  ['trailing encoded space', (p) => `${p}%20`],
  ['trailing encoded tab', (p) => `${p}%09`],
  ['trailing NUL', (p) => `${p}%00`],
  ['NUL inside', (p) => p.replace(/\/([^/]*)$/, '/%00$1')],
  ['NUL segment', (p) => `${p}/%00`],
];

/** Each internal path as the internal listener serves it (its own headers), with what its answer holds. */
const INTERNAL_PATHS: { path: string; headers: () => Record<string, string>; holds: RegExp }[] = [
  { path: '/metrics', headers: () => ({}), holds: /# HELP / },
  { path: '/metrics/commands/abc', headers: () => ({}), holds: /^\{\}$/ },
  { path: '/health/live', headers: () => ({}), holds: /event_loop_delay_ms/ },
  { path: '/health/ready', headers: () => ({}), holds: /"checks"/ },
  { path: '/internal/team-owner', headers: () => internalHeaders(team.team.id), holds: /"email"/ },
];

/** The same spelling of a path no route has: what the public port answers to that spelling of an unknown path. */
const unknownLike = (path: string) => path.replace(/[a-z]/g, 'q');

const NOT_FOUND = JSON.stringify({
  success: false,
  error: { code: 'NOT_FOUND', message: 'Route not found', details: {} },
});
const MALFORMED = JSON.stringify({
  success: false,
  error: { code: 'VALIDATION_ERROR', message: 'Malformed HTTP request', details: {} },
});

describe('the internal routes on the public port', () => {
  test('when the internal listener is asked the real paths, then it serves each one', async () => {
    for (const { path, headers, holds } of INTERNAL_PATHS) {
      const res = await raw(gw.internalUrl, `GET ${path} HTTP/1.1`, headers());
      expect({ path, status: res.status, holds: holds.test(res.body) }).toEqual({ path, status: 200, holds: true });
    }
  });

  for (const { path, headers, holds } of INTERNAL_PATHS) {
    test(`when ${path} is asked on the public port under ${SPELLINGS.length} spellings, with a key or without, then each answer is that of a route that does not exist`, async () => {
      expect(SPELLINGS.length).toBeGreaterThanOrEqual(12);
      const withKey = { ...headers(), authorization: `Bearer ${team.apiKey}` };
      for (const [name, spell] of [['as is', (p: string) => p] as const, ...SPELLINGS]) {
        const target = spell(path);
        for (const [who, sent] of [
          ['with a key', withKey],
          ['without a key', headers()],
        ] as const) {
          const got = await raw(gw.url, `GET ${target} HTTP/1.1`, sent);
          const seen = {
            spelling: name,
            target,
            who,
            status: got.status,
            leaked: holds.test(got.body),
            body: got.body.slice(0, 200),
          };
          const control = await raw(gw.url, `GET ${spell(unknownLike(path))} HTTP/1.1`, sent);
          if (who === 'with a key') {
            // "Route not found", as that spelling of a path no route has answers: a dot segment or a NUL too. Only
            // the request line Node's HTTP parser refuses (a target starting with `\`) never reaches a route.
            expect(seen).toEqual({ ...seen, status: control.status, leaked: false, body: control.body.slice(0, 200) });
            expect([name, got.status, got.body]).toEqual([
              name,
              ...(name === 'backslash' ? [400, MALFORMED] : [404, NOT_FOUND]),
            ]);
          } else {
            // Without a key a path no route has asks for one (401); an internal route refuses at once (404).
            const refused =
              got.status === 404
                ? { status: 404, body: NOT_FOUND }
                : { status: control.status, body: control.body.slice(0, 200) };
            expect(seen).toEqual({ ...seen, ...refused, leaked: false });
          }
        }
      }
      const head = await raw(gw.url, `HEAD ${encodeLetterOf(path, 1, true)} HTTP/1.1`, withKey);
      expect(head.status).toBe(404);
    });
  }
});

describe('headers only the gateway sets for a service', () => {
  const traced = () => {
    const traceId = randomBytes(16).toString('hex');
    return { traceId, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` };
  };
  /** The store commands the gateway counted for the trace (its key lookup: a new team's key is not cached yet). */
  const countedByGateway = async (traceId: string) =>
    (await call(gw.internalUrl, `/metrics/commands/${traceId}`)).body as Record<string, number>;

  test('when a public caller sends the store-command counting header or identity headers, then the upstream gets none of them and the gateway counts nothing', async () => {
    const fresh = await newTeam(gw.accounts, 'enterprise');
    const { traceId, traceparent } = traced();
    const res = await call(gw.url, '/v1/clients/cli_1', {
      key: fresh.apiKey,
      headers: {
        traceparent,
        [COUNT_COMMANDS_HEADER]: '1',
        [HEADER.internalToken]: 'forged-token-forged-token',
        [HEADER.teamId]: 'team_forged',
        [HEADER.userId]: 'user_forged',
        [HEADER.scopes]: 'admin',
        [HEADER.settings]: 'e30',
      },
    });
    expect(res.status).toBe(200);
    const got = res.body.data.headers as Record<string, string>;
    expect(got[COUNT_COMMANDS_HEADER]).toBeUndefined();
    expect([got[HEADER.internalToken], got[HEADER.teamId], got[HEADER.userId], got[HEADER.scopes]]).toEqual([
      INTERNAL_TOKEN,
      fresh.team.id,
      fresh.user.id,
      'read,write,admin',
    ]);
    expect(got[HEADER.settings]).not.toBe('e30');
    expect(await countedByGateway(traceId)).toEqual({});
  });

  test('when the caller also carries the internal credential (the bench), then the gateway counts its request and the header goes on to the service', async () => {
    const fresh = await newTeam(gw.accounts, 'enterprise');
    const { traceId, traceparent } = traced();
    const res = await call(gw.url, '/v1/clients/cli_1', {
      key: fresh.apiKey,
      headers: { traceparent, [COUNT_COMMANDS_HEADER]: '1', [HEADER.internalToken]: INTERNAL_TOKEN },
    });
    expect(res.status).toBe(200);
    const got = res.body.data.headers as Record<string, string>;
    expect(got[COUNT_COMMANDS_HEADER]).toBe('1');
    expect(got[HEADER.internalToken]).toBe(INTERNAL_TOKEN);
    expect(Object.keys(await countedByGateway(traceId)).length).toBeGreaterThan(0);
  });
});
