// What webhook creation tells about a URL, through the app in process: control
// characters and refused ports are 400 Invalid URL before anything is sent; a
// receiver that does not answer 2xx is 422 URL not reachable and no more (no
// status code, no error class: nothing to probe hosts and ports with), while the
// log says why at debug, showing the URL as scheme and host only.
import { createServer } from 'node:net';
import { startHttpsReceiver, type HttpsReceiver } from '@lpm/test-kit/https-receiver';
import { captureLogger } from '@lpm/test-kit/wait';
import { identity } from '@lpm/test-kit/teams';
import { createWebhook, startWebhooks, type WebhooksUnderTest } from './helper.ts';

const team = identity();
const log = captureLogger();

let sut: WebhooksUnderTest;
let receiver: HttpsReceiver;

beforeAll(async () => {
  // Private addresses allowed: the receivers listen on 127.0.0.1.
  sut = await startWebhooks({ allowPrivateUrls: true, logger: log });
  receiver = await startHttpsReceiver((req) =>
    req.path.startsWith('/fails') ? { status: 503, body: 'busy' } : { status: 200 },
  );
});

afterAll(async () => {
  await sut?.close();
  await receiver?.close();
});

const subscribe = (url: string) =>
  sut.call(team, { method: 'POST', url: '/v1/webhooks', payload: { url, events: ['client.created'] } });

function expectInvalidUrl(res: { statusCode: number; json(): { error: unknown } }) {
  expect(res.statusCode).toBe(400);
  expect(res.json().error).toMatchObject({
    code: 'VALIDATION_ERROR',
    message: 'Invalid URL',
    details: { field: 'url' },
  });
}

test.each([
  ['a tab', '/ho\tok'],
  ['a CR', '/ho\rok'],
  ['a LF', '/hook\n'],
  ['a NUL', '/ho\u0000ok'],
])('when the URL has %s, then 400 Invalid URL and nothing is sent or stored', async (_what, path) => {
  const before = receiver.requests.length;
  expectInvalidUrl(await subscribe(`${receiver.url}${path}`));
  expect(receiver.requests).toHaveLength(before);
  expect(await sut.db.collection('webhooks').countDocuments({ team_id: team.teamId })).toBe(0);
});

test('when an existing webhook is given a URL with a control character, then 400 Invalid URL', async () => {
  const other = identity();
  const id = await createWebhook(sut, other, `${receiver.url}/kept`, ['client.created']);
  const res = await sut.call(other, {
    method: 'PUT',
    url: `/v1/webhooks/${id}`,
    payload: { url: `${receiver.url}/ke\tpt` },
  });
  expectInvalidUrl(res);
  const [stored] = await sut.db.collection('webhooks').find({ team_id: other.teamId }).toArray();
  expect(stored.url).toBe(`${receiver.url}/kept`);
});

test.each([
  'https://127.0.0.1:22/hook',
  'https://127.0.0.1:80/hook',
  'https://127.0.0.1:8/hook',
  'https://localhost:1023/hook',
])('when the URL names a port outside 443 and 1024-65535 (%s), then 400 Invalid URL', async (url) => {
  expectInvalidUrl(await subscribe(url));
});

test('when the ping is not answered with a 2xx, then 422 URL not reachable with only its reason, and the log says why without the path or query', async () => {
  const res = await subscribe(`${receiver.url}/fails/t0ken-in-path?key=s3cret`);
  expect(res.statusCode).toBe(422);
  expect(res.json().error).toEqual({
    code: 'VALIDATION_ERROR',
    message: 'URL not reachable',
    details: { reason: 'url_not_reachable' },
  });
  const line = log.lines.find((l) => l.msg === 'webhook ping failed');
  expect(line).toMatchObject({
    level: 'debug',
    obj: { url: receiver.url, status_code: 503, error_class: 'http_5xx', team_id: team.teamId },
  });
  expect(JSON.stringify(log.lines)).not.toMatch(/t0ken-in-path|s3cret|\/fails/);
});

test('when nothing listens on the port, then the same 422 without the error class', async () => {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const { port } = probe.address() as { port: number };
  await new Promise((r) => probe.close(r));
  const res = await subscribe(`https://127.0.0.1:${port}/closed`);
  expect(res.json().error).toEqual({
    code: 'VALIDATION_ERROR',
    message: 'URL not reachable',
    details: { reason: 'url_not_reachable' },
  });
  expect(
    log.lines.filter((l) => l.msg === 'webhook ping failed').map((l) => (l.obj as { error_class: string }).error_class),
  ).toContain('connection_refused');
});

test('when a setting widens the ports, then a URL on port 80 passes the check', async () => {
  const wide = await startWebhooks({
    allowPrivateUrls: true,
    allowedPorts: [
      [80, 80],
      [443, 443],
      [1024, 65535],
    ],
  });
  try {
    // Nothing answers https on 127.0.0.1:80 here: the URL is accepted as a URL and fails the ping instead.
    const res = await wide.call(team, {
      method: 'POST',
      url: '/v1/webhooks',
      payload: { url: 'https://127.0.0.1:80/hook', events: ['client.created'] },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().error.message).toBe('URL not reachable');
  } finally {
    await wide.close();
  }
});
