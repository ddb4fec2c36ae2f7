// Webhook subscriptions and deliveries through the gateway of a running system,
// with real HTTPS receivers whose CA the processes trust through NODE_EXTRA_CA_CERTS.
// Private addresses are allowed here (the receivers listen on 127.0.0.1); the
// refusal of private and special addresses is tested in webhooks-ssrf.test.ts.
import { createHmac } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import type { IssuedTeam, RunningSystem } from '@lpm/test-kit/running-system';
import { startHttpsReceiver, type HttpsReceiver } from '@lpm/test-kit/https-receiver';
import { waitFor } from '@lpm/test-kit/wait';
import { PAYLOAD_FIELDS } from '@lpm/test-kit/webhook-payload';
import { expectError } from '@lpm/test-kit/api';
import { receivingSystemForSuite, retryDelivery, withStoredWebhooks } from './receiving-system.ts';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let sys: RunningSystem;
let t: IssuedTeam;
let receiver: HttpsReceiver;

const call = (method: string, path: string, body?: unknown, key = t.api_key) => sys.call(key, method, path, body);
const subscribe = async (url: string, events: string[], key = t.api_key) => {
  const res = await call('POST', '/v1/webhooks', { url, events, description: 'test' }, key);
  expect(res.status).toBe(201);
  return res.body.data as { id: string; secret: string; url: string };
};
const receivedOf = (r: HttpsReceiver, type: string) => r.requests.filter((q) => JSON.parse(q.body).type === type);

receivingSystemForSuite('webhooksapi', (started) => {
  ({ sys, receiver } = started);
  t = sys.team('Ganchos');
});

describe('POST /v1/webhooks', () => {
  test('when a reachable https URL is subscribed, then 201 returns the secret once, after a signed ping', async () => {
    const pinged = receiver.requests.length;
    const res = await call('POST', '/v1/webhooks', {
      url: `${receiver.url}/hooks/a`,
      events: ['client.created'],
      description: 'CRM',
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({
      id: expect.stringMatching(/^wh_[0-9a-z]{26}$/),
      url: `${receiver.url}/hooks/a`,
      events: ['client.created'],
      description: 'CRM',
      active: true,
      rate_limit: null,
      secret: expect.stringMatching(/^whsec_/),
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    const ping = receiver.requests[pinged];
    expect(JSON.parse(ping.body)).toMatchObject({ type: 'ping', webhook_id: res.body.data.id, team_id: t.team.id });
    const expected = createHmac('sha256', res.body.data.secret)
      .update(`${String(ping.headers['x-service-timestamp'])}.${ping.body}`)
      .digest('hex');
    expect(ping.headers['x-service-signature']).toBe(expected);
  });

  test('when the secret is stored, then it is sealed: no field of the stored record holds it', async () => {
    const created = await subscribe(`${receiver.url}/hooks/sealed`, ['*']);
    const stored = await withStoredWebhooks(sys, (webhooks) => webhooks.findOne({ _id: created.id }));
    expect(stored).not.toBeNull();
    expect(JSON.stringify(stored)).not.toContain(created.secret);
    expect(JSON.stringify(stored)).not.toContain(created.secret.slice('whsec_'.length));
    const listed = (await call('GET', '/v1/webhooks')).body.data.find((w: { id: string }) => w.id === created.id);
    expect(listed.secret).toBeUndefined();
  });

  test('when the URL is not https or not a URL, then 400 Invalid URL', async () => {
    for (const url of [receiver.url.replace('https:', 'http:'), 'ftp://example.com/x', 'not a url', '']) {
      expectError(
        await call('POST', '/v1/webhooks', { url, events: ['client.created'] }),
        400,
        'VALIDATION_ERROR',
        'Invalid URL',
      );
    }
  });

  test('when events are empty, unknown or not a list, then 400 Invalid events', async () => {
    for (const events of [[], ['client.exploded'], 'client.created', ['client.created', 42]]) {
      expectError(
        await call('POST', '/v1/webhooks', { url: `${receiver.url}/e`, events }),
        400,
        'VALIDATION_ERROR',
        'Invalid events',
      );
    }
    expectError(
      await call('POST', '/v1/webhooks', { url: `${receiver.url}/e` }),
      400,
      'VALIDATION_ERROR',
      'events is required',
    );
  });

  test('when the URL is already registered by the team, then 409 URL already registered', async () => {
    await subscribe(`${receiver.url}/hooks/dup`, ['client.created']);
    const res = await call('POST', '/v1/webhooks', { url: `${receiver.url}/hooks/dup`, events: ['case.created'] });
    expectError(res, 409, 'DUPLICATE_ENTRY', 'URL already registered');
  });

  test('when the receiver does not answer 2xx to the ping, then 422 URL not reachable', async () => {
    const failing = await startHttpsReceiver(() => ({ status: 500, body: 'nope' }));
    try {
      const res = await call('POST', '/v1/webhooks', { url: `${failing.url}/x`, events: ['client.created'] });
      expectError(res, 422, 'VALIDATION_ERROR', 'URL not reachable');
      // Only the reason: a status code or error class would let webhook creation probe hosts and ports.
      expect(res.body.error.details).toEqual({ reason: 'url_not_reachable' });
    } finally {
      await failing.close();
    }
    // Closed now: a port that was free a moment ago (ports below 1024 but 443 are refused as 400 Invalid URL).
    const closedPort = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const closed = await call('POST', '/v1/webhooks', {
      url: `https://127.0.0.1:${closedPort}/closed`,
      events: ['client.created'],
    });
    expectError(closed, 422, 'VALIDATION_ERROR', 'URL not reachable');
    expect(closed.body.error.details).toEqual({ reason: 'url_not_reachable' });
    expectError(
      await call('POST', '/v1/webhooks', { url: 'https://127.0.0.1:9/closed', events: ['client.created'] }),
      400,
      'VALIDATION_ERROR',
      'Invalid URL',
    );
  });

  test('when a team has 25 webhooks, then the 26th is 422 Webhook limit reached', async () => {
    const full = sys.team('Cheio');
    for (let i = 0; i < 25; i++) await subscribe(`${receiver.url}/full/${i}`, ['client.created'], full.api_key);
    const res = await call(
      'POST',
      '/v1/webhooks',
      { url: `${receiver.url}/full/25`, events: ['client.created'] },
      full.api_key,
    );
    expectError(res, 422, 'VALIDATION_ERROR', 'Webhook limit reached');
    expect((await call('GET', '/v1/webhooks', undefined, full.api_key)).body.data).toHaveLength(25);
  });

  test('when a key lacks the admin scope, then 403 on every webhook route', async () => {
    const key = sys.admin('key', 'create', '--team', t.team.id, '--user', t.user.id, '--scopes', 'read,write').api_key;
    for (const res of [
      await call('GET', '/v1/webhooks', undefined, key),
      await call('POST', '/v1/webhooks', { url: `${receiver.url}/x`, events: ['*'] }, key),
    ])
      expectError(res, 403, 'FORBIDDEN', 'Insufficient permissions');
  });
});

describe('GET, PUT, DELETE /v1/webhooks', () => {
  test('when listed, then every webhook has its counters; with no attempts the success rate is 100', async () => {
    const team = sys.team('Lista de ganchos');
    const created = await subscribe(`${receiver.url}/list`, ['case.created'], team.api_key);
    const res = await call('GET', '/v1/webhooks', undefined, team.api_key);
    expect(res.status).toBe(200);
    expect(res.body.pagination).toBeUndefined();
    expect(res.body.data).toEqual([
      {
        id: created.id,
        url: `${receiver.url}/list`,
        events: ['case.created'],
        description: 'test',
        active: true,
        rate_limit: null,
        created_at: expect.stringMatching(ISO_MS),
        updated_at: expect.stringMatching(ISO_MS),
        secret_rotated_at: null,
        previous_secret_expires_at: null,
        last_triggered_at: null,
        success_rate: 100,
        total_deliveries: 0,
        failed_deliveries: 0,
        test_deliveries: 0,
        test_failed_deliveries: 0,
      },
    ]);
  });

  test('when updated, then the response holds id, the fields sent and updated_at; a new URL is checked again', async () => {
    const created = await subscribe(`${receiver.url}/put`, ['client.created']);
    const res = await call('PUT', `/v1/webhooks/${created.id}`, {
      events: ['client.updated', 'case.created'],
      active: false,
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      id: created.id,
      events: ['client.updated', 'case.created'],
      active: false,
      updated_at: expect.stringMatching(ISO_MS),
    });
    expectError(
      await call('PUT', `/v1/webhooks/${created.id}`, { url: 'http://x.example' }),
      400,
      'VALIDATION_ERROR',
      'Invalid URL',
    );
    expectError(
      await call('PUT', `/v1/webhooks/${created.id}`, { events: ['nope'] }),
      400,
      'VALIDATION_ERROR',
      'Invalid events',
    );
    expectError(await call('PUT', `/v1/webhooks/${created.id}`, {}), 400, 'VALIDATION_ERROR', 'No fields to update');
    expectError(
      await call('PUT', `/v1/webhooks/${created.id}`, { secret: 'x' }),
      400,
      'VALIDATION_ERROR',
      'Unknown field: secret',
    );
    const moved = await call('PUT', `/v1/webhooks/${created.id}`, { url: `${receiver.url}/moved` });
    expect(moved.body.data).toMatchObject({ url: `${receiver.url}/moved` });
  });

  test('when deleted, then {id, deleted: true} and it is gone', async () => {
    const created = await subscribe(`${receiver.url}/del`, ['client.created']);
    const res = await call('DELETE', `/v1/webhooks/${created.id}`);
    expect(res.body.data).toEqual({ id: created.id, deleted: true });
    for (const res of [
      await call('DELETE', `/v1/webhooks/${created.id}`),
      await call('PUT', `/v1/webhooks/${created.id}`, { active: true }),
    ])
      expectError(res, 404, 'NOT_FOUND', 'Webhook not found');
  });
});

describe('delivery', () => {
  test('when a client is created, then a subscribed receiver gets the spec payload with both signature header sets', async () => {
    const team = sys.team('Entrega');
    const hook = await subscribe(`${receiver.url}/deliver`, ['client.created'], team.api_key);
    const created = (await call('POST', '/v1/clients', { type: 'PF', name: 'Ana Entrega' }, team.api_key)).body.data;
    await waitFor('client.created at the receiver', () => receiver.requests.some((r) => r.body.includes(created.id)));
    const req = receiver.requests.find((r) => r.body.includes(created.id))!;
    const payload = JSON.parse(req.body);
    expect(Object.keys(payload).sort()).toEqual(PAYLOAD_FIELDS);
    expect(payload).toMatchObject({
      type: 'client.created',
      api_version: 'v1',
      team_id: team.team.id,
      webhook_id: hook.id,
      data: { previous_attributes: null },
    });
    expect(payload.id).toMatch(/^evt_/);
    expect(payload.created_at).toMatch(ISO_MS);
    expect(payload.data.object).toEqual(
      (await call('GET', `/v1/clients/${created.id}`, undefined, team.api_key)).body.data,
    );

    const h = req.headers;
    expect(h['content-type']).toBe('application/json');
    expect(h['x-service-event-id']).toBe(payload.id);
    expect(Math.abs(Number(h['x-service-timestamp']) - Date.now() / 1000)).toBeLessThan(300);
    expect(h['x-service-signature']).toBe(
      createHmac('sha256', hook.secret)
        .update(`${String(h['x-service-timestamp'])}.${req.body}`)
        .digest('hex'),
    );
    expect(h['webhook-id']).toBe(payload.id);
    expect(h['webhook-timestamp']).toBe(h['x-service-timestamp']);
    const key = Buffer.from(hook.secret.slice('whsec_'.length), 'base64');
    expect(h['webhook-signature']).toBe(
      `v1,${createHmac('sha256', key)
        .update(`${payload.id}.${String(h['webhook-timestamp'])}.${req.body}`)
        .digest('base64')}`,
    );
  });

  test('when events happen, then only subscribed ones arrive and an inactive webhook gets nothing', async () => {
    const team = sys.team('Filtro');
    const own = await startHttpsReceiver();
    const off = await startHttpsReceiver();
    try {
      await subscribe(`${own.url}/only-updated`, ['client.updated'], team.api_key);
      const inactive = await subscribe(`${off.url}/inactive`, ['*'], team.api_key);
      await call('PUT', `/v1/webhooks/${inactive.id}`, { active: false }, team.api_key);
      const c = (await call('POST', '/v1/clients', { type: 'PJ', name: 'Filtrada' }, team.api_key)).body.data;
      await call('PUT', `/v1/clients/${c.id}`, { name: 'Filtrada Ltda' }, team.api_key);
      await waitFor('client.updated', () => receivedOf(own, 'client.updated').length === 1);
      await new Promise((r) => setTimeout(r, 1000));
      expect(own.requests.map((r) => JSON.parse(r.body).type)).toEqual(['ping', 'client.updated']);
      expect(off.requests.map((r) => JSON.parse(r.body).type)).toEqual(['ping']);
    } finally {
      await own.close();
      await off.close();
    }
  });

  test('when deliveries happened, then the log lists each attempt newest first, the counters count them, and a retry adds one', async () => {
    const team = sys.team('Registro');
    const hook = await subscribe(`${receiver.url}/log`, ['client.created'], team.api_key);
    for (const name of ['Um', 'Dois']) await call('POST', '/v1/clients', { type: 'PF', name }, team.api_key);
    const log = async () => (await call('GET', `/v1/webhooks/${hook.id}/deliveries`, undefined, team.api_key)).body;
    await waitFor(
      'two succeeded deliveries',
      async () => (await log()).data.filter((d: { status: string }) => d.status === 'succeeded').length === 2,
    );
    const body = await log();
    expect(body.pagination).toEqual({ page: 1, limit: 20, total: 2, pages: 1 });
    const [newest, oldest] = body.data;
    expect(newest.created_at >= oldest.created_at).toBe(true);
    expect(newest).toMatchObject({
      id: expect.stringMatching(/^dlv_/),
      event_type: 'client.created',
      status: 'succeeded',
      attempts_count: 1,
    });
    expect(newest.attempts).toEqual([
      {
        attempt: 1,
        at: expect.stringMatching(ISO_MS),
        success: true,
        status_code: 200,
        latency_ms: expect.any(Number),
        error_class: null,
        response_body: expect.any(String),
      },
    ]);

    const retried = await retryDelivery(sys, team.api_key, hook.id, oldest.id);
    expect(retried.status).toBe(200);
    expect(retried.body.data).toMatchObject({ id: oldest.id, status: 'pending' });
    await waitFor(
      'the retried attempt',
      async () => (await log()).data.find((d: { id: string }) => d.id === oldest.id).attempts.length === 2,
    );
    // The counters follow within about a second (the fold).
    const stats = async () => (await call('GET', '/v1/webhooks', undefined, team.api_key)).body.data[0];
    await waitFor('the counters', async () => (await stats()).total_deliveries === 3);
    expect(await stats()).toMatchObject({
      total_deliveries: 3,
      failed_deliveries: 0,
      success_rate: 100,
      last_triggered_at: expect.stringMatching(ISO_MS),
    });

    expectError(
      await retryDelivery(sys, team.api_key, hook.id, 'dlv_01jd3k0000000000000000000'),
      404,
      'NOT_FOUND',
      'Delivery not found',
    );
    expectError(
      await call('GET', '/v1/webhooks/wh_01jd3k0000000000000000000/deliveries', undefined, team.api_key),
      404,
      'NOT_FOUND',
      'Webhook not found',
    );
  });
});
