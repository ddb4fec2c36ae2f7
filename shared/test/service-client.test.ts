// ServiceClient: what travels with a call to another service. A team and user go as
// the internal headers; a whole Identity also carries its scopes and team settings
// (a public route of the called service may read the team's kanban); extra headers
// such as Idempotency-Key go along.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { defaultTeamSettings, HEADER, type Identity } from '../src/identity.ts';
import { ServiceClient } from '../src/upstream/service-client.ts';
import { listenOnLoopback } from './support/listen.ts';

let server: Server;
let client: ServiceClient;
let seen: IncomingHttpHeaders[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(201, { 'content-type': 'application/json' }).end('{"success":true,"data":{"id":"x"}}');
  });
  const port = await listenOnLoopback(server, 'echo');
  client = new ServiceClient({ name: 'echo', baseUrl: `http://127.0.0.1:${port}`, internalToken: 't'.repeat(32) });
});

afterAll(() => new Promise<void>((done) => server.close(() => done())));
beforeEach(() => (seen = []));

test('when called for a team and user, then only the internal credential, team and user go', async () => {
  await client.request({ teamId: 'team_1', userId: 'user_1' }, 'GET', '/x');
  expect(seen[0]).toMatchObject({ [HEADER.internalToken]: 't'.repeat(32), [HEADER.teamId]: 'team_1', [HEADER.userId]: 'user_1' });
  expect(seen[0][HEADER.settings]).toBeUndefined();
  expect(seen[0][HEADER.scopes]).toBeUndefined();
});

test('when called for an Identity with extra headers, then its scopes and team settings go too, and the extra headers', async () => {
  const settings = { ...defaultTeamSettings(), case_phases: ['Triagem', 'Petição'] };
  const who: Identity = { teamId: 'team_2', userId: 'user_2', scopes: ['read', 'write'], settings };
  const res = await client.request(who, 'POST', '/v1/cases', { title: 'T' }, { headers: { 'idempotency-key': 'deal-won-case:d1' } });
  expect(res.status).toBe(201);
  expect(seen[0]).toMatchObject({ [HEADER.teamId]: 'team_2', [HEADER.userId]: 'user_2', [HEADER.scopes]: 'read,write', 'idempotency-key': 'deal-won-case:d1' });
  const sent = JSON.parse(Buffer.from(String(seen[0][HEADER.settings]), 'base64url').toString('utf8'));
  expect(sent.case_phases).toEqual(['Triagem', 'Petição']);
});

test('when the base URL lists replicas comma-separated, then calls go to each in turn', async () => {
  const other = createServer((req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true,"data":{"id":"other"}}'));
  const otherPort = await listenOnLoopback(other, 'other');
  const port = (server.address() as { port: number }).port;
  try {
    const both = new ServiceClient({ name: 'echo', baseUrl: `http://127.0.0.1:${port}, http://127.0.0.1:${otherPort}`, internalToken: 't'.repeat(32) });
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push((await both.request<{ data: { id: string } }>({ teamId: 'team_1' }, 'GET', '/x')).body.data.id);
    expect(ids).toEqual(['x', 'other', 'x', 'other']);
  } finally {
    await new Promise<void>((done) => other.close(() => done()));
  }
});
