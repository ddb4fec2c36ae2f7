// The client's own behaviour (retries, idempotency keys, errors, paging, the
// bearer key) against a stand-in gateway that answers as each test tells it.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, LpmError } from '../src/index.ts';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  at: number;
}
type Reply = { status: number; body: unknown; headers?: Record<string, string> };

let server: Server;
let baseUrl: string;
let seen: Seen[] = [];
let replies: ((req: Seen) => Reply)[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const s = { method: req.method!, url: req.url!, headers: req.headers, body, at: Date.now() };
      seen.push(s);
      const reply = (replies.shift() ?? ((): Reply => ({ status: 500, body: {} })))(s);
      res.writeHead(reply.status, {
        'content-type': 'application/json',
        'x-request-id': `req-${seen.length}`,
        ...reply.headers,
      });
      res.end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((done) => server.close(done)));

beforeEach(() => {
  seen = [];
  replies = [];
});

const error = (status: number, code: string, message: string, headers?: Record<string, string>): Reply => ({
  status,
  body: { success: false, error: { code, message, details: {} } },
  headers,
});
const lpm = () => createClient({ baseUrl, apiKey: 'lpk_test', backoffMs: 10 });

test('when a call is made, then it carries the bearer key and resolves to the envelope', async () => {
  replies = [() => ({ status: 200, body: { success: true, data: { id: 'case_1', title: 'A' } } })];
  const answer = await lpm().getCase({ path: { id: 'case_1' } });
  expect(answer.data).toEqual({ id: 'case_1', title: 'A' });
  expect(seen[0]).toMatchObject({
    method: 'GET',
    url: '/v1/cases/case_1',
    headers: { authorization: 'Bearer lpk_test' },
  });
});

test('when the API answers 429, then the call is retried after Retry-After seconds', async () => {
  replies = [
    () => error(429, 'RATE_LIMIT_EXCEEDED', 'Rate limit exceeded', { 'retry-after': '1' }),
    () => ({ status: 200, body: { success: true, data: [], pagination: { page: 1, limit: 20, total: 0, pages: 0 } } }),
  ];
  await lpm().listCases();
  expect(seen).toHaveLength(2);
  expect(seen[1].at - seen[0].at).toBeGreaterThanOrEqual(1000);
});

test('when a POST meets 503s, then it is retried with backoff under one Idempotency-Key', async () => {
  replies = [
    () => error(503, 'SERVICE_UNAVAILABLE', 'Service unavailable'),
    () => error(503, 'SERVICE_UNAVAILABLE', 'Service unavailable'),
    () => ({ status: 201, body: { success: true, data: { id: 'case_2' } } }),
  ];
  const answer = await lpm().createCase({ body: { title: 'Inventário' } });
  expect(answer.data.id).toBe('case_2');
  const keys = seen.map((s) => s.headers['idempotency-key']);
  expect(keys).toHaveLength(3);
  expect(new Set(keys)).toEqual(new Set([expect.stringMatching(/^[0-9a-f-]{36}$/)]));
  expect(seen.map((s) => JSON.parse(s.body))).toEqual(Array(3).fill({ title: 'Inventário' }));
});

test('when two POSTs are made, then each has its own Idempotency-Key, and one given by the caller is kept', async () => {
  replies = [1, 2, 3].map(() => () => ({ status: 201, body: { success: true, data: {} } }));
  await lpm().createCase({ body: { title: 'A' } });
  await lpm().createCase({ body: { title: 'B' } });
  await lpm().createCase({ body: { title: 'C' }, header: { 'Idempotency-Key': 'mine-1' } });
  const [a, b, c] = seen.map((s) => s.headers['idempotency-key']);
  expect(a).not.toBe(b);
  expect(c).toBe('mine-1');
});

test('when the API answers an error, then LpmError carries status, code, message, details and the request id', async () => {
  replies = [
    () => ({
      status: 422,
      body: {
        success: false,
        error: { code: 'VALIDATION_ERROR', message: 'Deal already closed', details: { reason: 'deal_already_closed' } },
      },
    }),
  ];
  const failure = await lpm()
    .markDealWon({ path: { id: 'deal_1' }, body: {} })
    .catch((e: unknown) => e);
  expect(failure).toBeInstanceOf(LpmError);
  expect(failure).toMatchObject({
    status: 422,
    code: 'VALIDATION_ERROR',
    message: 'Deal already closed',
    details: { reason: 'deal_already_closed' },
    requestId: 'req-1',
  });
});

test('when 503 outlasts the retries, then the call fails with it', async () => {
  replies = [1, 2, 3, 4].map(() => () => error(503, 'SERVICE_UNAVAILABLE', 'Service unavailable'));
  await expect(lpm().listDeals()).rejects.toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
  expect(seen).toHaveLength(4);
});

test('when a list is paginated, then every item of every page comes, asking 100 at a time', async () => {
  const page = (n: number, items: string[]) => () => ({
    status: 200,
    body: { success: true, data: items.map((id) => ({ id })), pagination: { page: n, limit: 100, total: 5, pages: 3 } },
  });
  replies = [page(1, ['a', 'b']), page(2, ['c', 'd']), page(3, ['e'])];
  const ids: string[] = [];
  for await (const client of lpm().paginate('listClients', { query: { segment: 'vip' } })) ids.push(client.id);
  expect(ids).toEqual(['a', 'b', 'c', 'd', 'e']);
  expect(seen.map((s) => new URL(s.url, baseUrl).searchParams.toString())).toEqual([
    'limit=100&segment=vip&page=1',
    'limit=100&segment=vip&page=2',
    'limit=100&segment=vip&page=3',
  ]);
});
