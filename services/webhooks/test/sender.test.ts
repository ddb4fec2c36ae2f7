// One delivery attempt against real HTTPS receivers (certificates from the run's
// test CA): outcomes, the 4 KiB response cap, redirects, timeouts, TLS trust,
// the address guard at connect time and keep-alive reuse.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHttpsReceiver, type HttpsReceiver } from '@lpm/test-kit/https-receiver';
import { createTestTls } from '@lpm/test-kit/test-ca';
import { sleep } from '@lpm/test-kit/wait';
import { signatureHeaders, signingKeys } from '../src/domain/signing.ts';
import { retryAfterMs, WebhookSender } from '../src/upstream/webhook-sender.ts';
import { UrlGuard } from '../src/upstream/url-guard.ts';

const TIMEOUT_MS = 800;
const body = '{"id":"evt_01","type":"case.created"}';
const headers = signatureHeaders(signingKeys('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'), 'evt_01', body);

const receivers: HttpsReceiver[] = [];
const senders: WebhookSender[] = [];
const receiver = async (...args: Parameters<typeof startHttpsReceiver>) => {
  const r = await startHttpsReceiver(...args);
  receivers.push(r);
  return r;
};
const sender = (guard = new UrlGuard({ allowPrivate: true }), timeoutMs = TIMEOUT_MS) => {
  const s = new WebhookSender({ guard, timeoutMs });
  senders.push(s);
  return s;
};

afterEach(async () => {
  // Receivers first: a sender's close waits for requests a stalled receiver still holds.
  await Promise.all(receivers.splice(0).map((r) => r.close()));
  await Promise.all(senders.splice(0).map((s) => s.close()));
});

test('when the receiver answers 2xx, then the attempt is ok with its status, latency and body, and the receiver got the signed POST', async () => {
  // The receiver holds its answer 50 ms, so the latency has a floor as well as the call's own duration as a ceiling.
  const r = await receiver(async () => (await sleep(50), { status: 202, body: 'thanks' }));
  const started = performance.now();
  const result = await sender().send(`${r.url}/hooks/a?team=7`, body, headers);
  const elapsed = performance.now() - started;
  expect(result).toEqual({
    ok: true,
    statusCode: 202,
    errorClass: null,
    responseBody: 'thanks',
    latencyMs: expect.any(Number),
    retryAfterMs: null,
  });
  expect(result.latencyMs).toBeGreaterThanOrEqual(49);
  expect(result.latencyMs).toBeLessThanOrEqual(Math.ceil(elapsed));
  expect(r.requests).toHaveLength(1);
  expect(r.requests[0]).toMatchObject({ method: 'POST', path: '/hooks/a?team=7', body });
  expect(r.requests[0].headers).toMatchObject({
    'content-type': 'application/json',
    'x-service-signature': headers['X-Service-Signature'],
    'x-service-timestamp': headers['X-Service-Timestamp'],
    'x-service-event-id': 'evt_01',
    'webhook-signature': headers['webhook-signature'],
  });
});

test('when the receiver answers 500 or 404, then the attempt fails as http_5xx or http_4xx with the response body', async () => {
  const r = await receiver(() => ({ status: 500, body: 'database down' }));
  const s = sender();
  expect(await s.send(r.url, body, headers)).toMatchObject({
    ok: false,
    statusCode: 500,
    errorClass: 'http_5xx',
    responseBody: 'database down',
  });
  r.respond(() => ({ status: 404 }));
  expect(await s.send(r.url, body, headers)).toMatchObject({
    ok: false,
    statusCode: 404,
    errorClass: 'http_4xx',
    responseBody: '',
  });
});

test('when a 429 or 503 carries Retry-After in seconds or as an HTTP date, then the attempt says how long to wait; on other statuses, or unreadable, it says nothing', async () => {
  const r = await receiver(() => ({ status: 429, headers: { 'retry-after': '120' } }));
  const s = sender();
  expect(await s.send(r.url, body, headers)).toMatchObject({
    ok: false,
    statusCode: 429,
    errorClass: 'http_4xx',
    retryAfterMs: 120_000,
  });
  const at = new Date(Math.ceil(Date.now() / 1000) * 1000 + 30_000);
  r.respond(() => ({ status: 503, headers: { 'retry-after': at.toUTCString() } }));
  const dated = await s.send(r.url, body, headers);
  expect(dated.retryAfterMs).toBeGreaterThan(25_000);
  expect(dated.retryAfterMs).toBeLessThanOrEqual(at.getTime() - Date.now() + 1000);
  r.respond(() => ({ status: 500, headers: { 'retry-after': '120' } }));
  expect((await s.send(r.url, body, headers)).retryAfterMs).toBeNull();
  r.respond(() => ({ status: 429, headers: { 'retry-after': 'soon' } }));
  expect((await s.send(r.url, body, headers)).retryAfterMs).toBeNull();
  expect(retryAfterMs('Wed, 21 Oct 2015 07:28:00 GMT')).toBe(0);
});

test('when the response body is over 4 KiB, then 4096 bytes of it are kept, cut on a character boundary', async () => {
  const r = await receiver(() => ({ status: 200, body: 'x'.repeat(100_000) }));
  const s = sender();
  const ascii = await s.send(r.url, body, headers);
  expect(ascii).toMatchObject({ ok: true, statusCode: 200 });
  expect(Buffer.byteLength(ascii.responseBody!)).toBe(4096);

  // 3-byte characters: 4096 bytes would split the 1366th, so 1365 whole ones (4095 bytes) are kept.
  r.respond(() => ({ status: 200, body: '€'.repeat(2000) }));
  const euros = await s.send(r.url, body, headers);
  expect(euros.responseBody).toBe('€'.repeat(1365));

  r.respond(() => ({ status: 200, body: 'é'.repeat(2048) }));
  expect((await s.send(r.url, body, headers)).responseBody).toBe('é'.repeat(2048));
});

test('when the receiver redirects, then the redirect is not followed and the attempt fails as redirect', async () => {
  const target = await receiver();
  const r = await receiver(() => ({ status: 302, headers: { location: `${target.url}/moved` } }));
  expect(await sender().send(r.url, body, headers)).toMatchObject({
    ok: false,
    statusCode: 302,
    errorClass: 'redirect',
  });
  expect(r.requests).toHaveLength(1);
  expect(target.requests).toHaveLength(0);
});

test('when the receiver never answers, then the attempt fails as timeout after about timeoutMs', async () => {
  const r = await receiver(() => {});
  const started = Date.now();
  const result = await sender().send(r.url, body, headers);
  const elapsed = Date.now() - started;
  expect(result).toMatchObject({ ok: false, statusCode: null, errorClass: 'timeout', responseBody: null });
  expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
  expect(elapsed).toBeLessThan(TIMEOUT_MS + 700);
  expect(r.requests).toHaveLength(1);
});

test('when the receiver sends headers and then stalls the body, then the attempt still ends as timeout after about timeoutMs', async () => {
  const r = await receiver((_req, res) => {
    res.writeHead(200, { 'content-length': '10000' });
    res.write('partial');
  });
  const started = Date.now();
  const result = await sender().send(r.url, body, headers);
  expect(result).toMatchObject({ ok: false, statusCode: 200, errorClass: 'timeout' });
  expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 700);
});

test('when one receiver never answers, then a delivery to another is not held up by it', async () => {
  const stuck = await receiver(() => {});
  const fast = await receiver();
  const s = sender();
  const slow = s.send(stuck.url, body, headers);
  await new Promise((resolve) => setTimeout(resolve, 50));
  const started = Date.now();
  expect(await s.send(fast.url, body, headers)).toMatchObject({ ok: true });
  expect(Date.now() - started).toBeLessThan(TIMEOUT_MS / 2);
  expect(await slow).toMatchObject({ errorClass: 'timeout' });
});

test('when nothing listens on the port, then the attempt fails as connection_refused', async () => {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  expect(await sender().send(`https://127.0.0.1:${port}/hook`, body, headers)).toMatchObject({
    ok: false,
    statusCode: null,
    errorClass: 'connection_refused',
  });
});

test('when the receiver certificate is not signed by a trusted CA, then the attempt fails as tls and nothing is delivered', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lpm-untrusted-ca-'));
  try {
    const untrusted = createTestTls(dir);
    const r = await receiver(undefined, {
      key: readFileSync(untrusted.serverKey),
      cert: readFileSync(untrusted.serverCert),
    });
    expect(await sender().send(r.url, body, headers)).toMatchObject({ ok: false, statusCode: null, errorClass: 'tls' });
    expect(r.requests).toHaveLength(0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

describe('with private addresses off', () => {
  test('when the url is a loopback IP, then nothing is sent and the attempt fails as blocked_address', async () => {
    const r = await receiver();
    const s = sender(new UrlGuard({ allowPrivate: false }));
    expect(await s.send(r.url, body, headers)).toMatchObject({
      ok: false,
      statusCode: null,
      errorClass: 'blocked_address',
    });
    expect(await s.send(`https://[::ffff:127.0.0.1]:${r.port}/hook`, body, headers)).toMatchObject({
      errorClass: 'blocked_address',
    });
    expect(r.requests).toHaveLength(0);
    expect(r.connections).toBe(0);
  });

  test('when a name resolves to loopback at connect time, then nothing is sent and the attempt fails as blocked_address', async () => {
    const r = await receiver();
    expect(
      await sender(new UrlGuard({ allowPrivate: false })).send(`https://localhost:${r.port}/hook`, body, headers),
    ).toMatchObject({
      errorClass: 'blocked_address',
    });
    // A name that passed a check earlier but now points inside (DNS rebinding).
    const rebinding = new UrlGuard({ allowPrivate: false, resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    expect(await sender(rebinding).send(`https://hooks.example.test:${r.port}/hook`, body, headers)).toMatchObject({
      errorClass: 'blocked_address',
    });
    expect(r.connections).toBe(0);
  });
});

test('when the url is not https, then nothing is sent and the attempt fails as invalid_url', async () => {
  const r = await receiver();
  expect(await sender().send(r.url.replace('https:', 'http:'), body, headers)).toMatchObject({
    errorClass: 'invalid_url',
  });
  expect(r.connections).toBe(0);
});

test('when the url names a host, then the connection goes to the address the guard resolved at connect time', async () => {
  const r = await receiver();
  const asked: string[] = [];
  const guard = new UrlGuard({
    allowPrivate: true,
    resolve: async (host) => {
      asked.push(host);
      return [{ address: '127.0.0.1', family: 4 }];
    },
  });
  expect(await sender(guard).send(`https://localhost:${r.port}/hook`, body, headers)).toMatchObject({
    ok: true,
    statusCode: 200,
  });
  expect(asked).toEqual(['localhost']);
  expect(await sender().send(`https://localhost:${r.port}/hook`, body, headers)).toMatchObject({ ok: true });
});

test('when deliveries go one after the other to one receiver, then they share one kept-alive TCP connection', async () => {
  const r = await receiver();
  const s = sender();
  for (let i = 0; i < 3; i++) {
    expect(await s.send(r.url, body, headers)).toMatchObject({ ok: true });
    // undici marks a connection free again one macrotask after its response ends.
    await new Promise((resolve) => setImmediate(resolve));
  }
  expect(r.requests).toHaveLength(3);
  expect(r.connections).toBe(1);
});

test('when deliveries follow each other without a pause, then they still reuse connections rather than open one each', async () => {
  const r = await receiver();
  const s = sender();
  for (let i = 0; i < 10; i++) expect(await s.send(r.url, body, headers)).toMatchObject({ ok: true });
  expect(r.requests).toHaveLength(10);
  expect(r.connections).toBeLessThanOrEqual(2);
});
