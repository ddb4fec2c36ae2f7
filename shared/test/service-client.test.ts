// ServiceClient: what travels with a call to another service. A team and user go as
// the internal headers; a whole Identity also carries its scopes and team settings
// (a public route of the called service may read the team's kanban); extra headers
// such as Idempotency-Key go along.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { defaultTeamSettings, HEADER, type Identity } from '../src/identity.ts';
import { ServiceClient } from '../src/upstream/service-client.ts';
import { listenOnLoopback } from '@lpm/test-kit/listen';

let server: Server;
let client: ServiceClient;
let seen: IncomingHttpHeaders[] = [];

/** A client of the echo service over the replicas on `ports`, tried in that order. */
const echoClient = (...ports: number[]) =>
  new ServiceClient({
    name: 'echo',
    baseUrl: ports.map((p) => `http://127.0.0.1:${p}`).join(','),
    internalToken: 't'.repeat(32),
  });

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(201, { 'content-type': 'application/json' }).end('{"success":true,"data":{"id":"x"}}');
  });
  const port = await listenOnLoopback(server, 'echo');
  client = echoClient(port);
});

afterAll(() => new Promise<void>((done) => server.close(() => done())));
beforeEach(() => (seen = []));

test('when called for a team and user, then only the internal credential, team and user go', async () => {
  await client.request({ teamId: 'team_1', userId: 'user_1' }, 'GET', '/x');
  expect(seen[0]).toMatchObject({
    [HEADER.internalToken]: 't'.repeat(32),
    [HEADER.teamId]: 'team_1',
    [HEADER.userId]: 'user_1',
  });
  expect(seen[0][HEADER.settings]).toBeUndefined();
  expect(seen[0][HEADER.scopes]).toBeUndefined();
});

test('when called for an Identity with extra headers, then its scopes and team settings go too, and the extra headers', async () => {
  const settings = { ...defaultTeamSettings(), case_phases: ['Triagem', 'Petição'] };
  const who: Identity = { teamId: 'team_2', userId: 'user_2', scopes: ['read', 'write'], settings };
  const res = await client.request(
    who,
    'POST',
    '/v1/cases',
    { title: 'T' },
    { headers: { 'idempotency-key': 'deal-won-case:d1' } },
  );
  expect(res.status).toBe(201);
  expect(seen[0]).toMatchObject({
    [HEADER.teamId]: 'team_2',
    [HEADER.userId]: 'user_2',
    [HEADER.scopes]: 'read,write',
    'idempotency-key': 'deal-won-case:d1',
  });
  const sent = JSON.parse(Buffer.from(String(seen[0][HEADER.settings]), 'base64url').toString('utf8'));
  expect(sent.case_phases).toEqual(['Triagem', 'Petição']);
});

test('when the base URL lists replicas comma-separated, then calls go to each in turn', async () => {
  const other = createServer((req, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true,"data":{"id":"other"}}'),
  );
  const otherPort = await listenOnLoopback(other, 'other');
  const port = (server.address() as { port: number }).port;
  try {
    const both = new ServiceClient({
      name: 'echo',
      baseUrl: `http://127.0.0.1:${port}, http://127.0.0.1:${otherPort}`,
      internalToken: 't'.repeat(32),
    });
    const ids = [];
    for (let i = 0; i < 4; i++)
      ids.push((await both.request<{ data: { id: string } }>({ teamId: 'team_1' }, 'GET', '/x')).body.data.id);
    expect(ids).toEqual(['x', 'other', 'x', 'other']);
  } finally {
    await new Promise<void>((done) => other.close(() => done()));
  }
});

describe('failover between replicas', () => {
  const port = () => (server.address() as { port: number }).port;
  /** A port nothing listens on: a server listened there and was closed. */
  async function closedPort(): Promise<number> {
    const gone = createServer();
    const p = await listenOnLoopback(gone, 'gone');
    await new Promise<void>((done) => gone.close(() => done()));
    return p;
  }

  test('when one of two replicas refuses connections, then every call is answered by the other', async () => {
    const both = echoClient(await closedPort(), port());
    const answers = [];
    for (let i = 0; i < 6; i++)
      answers.push(
        (await both.request<{ data: { id: string } }>({ teamId: 'team_1' }, 'POST', '/x', { n: i })).body.data.id,
      );
    expect(answers).toEqual(Array(6).fill('x'));
    expect(seen).toHaveLength(6);
  });

  test('when a replica drops the connection before any answer, then the call is sent to the next one', async () => {
    const dropping = createServer((req) => req.socket.destroy());
    const droppingPort = await listenOnLoopback(dropping, 'dropping');
    try {
      const both = echoClient(droppingPort, port());
      for (let i = 0; i < 4; i++) expect((await both.request({ teamId: 'team_1' }, 'GET', '/x')).status).toBe(201);
    } finally {
      await new Promise<void>((done) => dropping.close(() => done()));
    }
  });

  test('when every replica refuses, or one answers 500, then the call is a 503 naming the service, and an answered call is not sent again', async () => {
    const none = echoClient(await closedPort(), await closedPort());
    await expect(none.request({ teamId: 'team_1' }, 'GET', '/x')).rejects.toMatchObject({
      status: 503,
      message: 'The echo service is unavailable',
    });
    let failing = 0;
    const broken = createServer((_req, res) => void (failing++, res.writeHead(500).end('{}')));
    const brokenPort = await listenOnLoopback(broken, 'broken');
    try {
      const pair = echoClient(brokenPort, port());
      await expect(pair.request({ teamId: 'team_1' }, 'GET', '/x')).rejects.toMatchObject({ status: 503 });
      expect({ failing, served: seen.length }).toEqual({ failing: 1, served: 0 });
    } finally {
      await new Promise<void>((done) => broken.close(() => done()));
    }
  });
});
