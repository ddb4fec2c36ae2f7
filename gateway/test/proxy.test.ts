import { request as httpRequest } from 'node:http';
import { describe, expect, test } from '@jest/globals';
import { HEADER, defaultTeamSettings } from '@lpm/shared/identity';
import { freePort } from '../../scripts/local-store.ts';
import {
  allUpstreams,
  call,
  type EchoGateway,
  echoGatewayForSuite,
  INTERNAL_TOKEN,
  startGateway,
  type TestGateway,
} from './support.ts';
import type { JsonAnswer } from '@lpm/test-kit/json';

let upstream: EchoGateway['upstream'];
let gw: TestGateway;
let team: EchoGateway['team'];

echoGatewayForSuite('proxy', (started) => ({ upstream, gw, team } = started));

/** Sends a body in chunks without Content-Length (Transfer-Encoding: chunked). */
function sendChunked(
  url: string,
  key: string,
  chunks: number,
  chunkSize: number,
): Promise<{ status: number; body: JsonAnswer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    const chunk = Buffer.alloc(chunkSize, 'a');
    let sent = 0;
    const next = () => {
      while (sent < chunks) {
        sent++;
        if (!req.write(chunk)) return void req.once('drain', next);
      }
      req.end();
    };
    next();
  });
}

describe('identity headers', () => {
  test('when a client sends identity headers, then they are dropped and the gateway sets its own', async () => {
    const forged = {
      [HEADER.internalToken]: 'forged-token-forged-token',
      [HEADER.teamId]: 'team_forged',
      [HEADER.userId]: 'user_forged',
      [HEADER.scopes]: 'read,write,admin',
      [HEADER.settings]: Buffer.from(JSON.stringify({ timezone: 'Europe/Paris' })).toString('base64url'),
    };
    const readOnly = await gw.accounts.createKey({ teamId: team.team.id, userId: team.user.id, scopes: ['read'] });
    const res = await call(gw.url, '/v1/clients/cli_1', { key: readOnly.apiKey, headers: forged });
    expect(res.status).toBe(200);
    const got = res.body.data.headers;
    expect(got[HEADER.internalToken]).toBe(INTERNAL_TOKEN);
    expect(got[HEADER.teamId]).toBe(team.team.id);
    expect(got[HEADER.userId]).toBe(team.user.id);
    expect(got[HEADER.scopes]).toBe('read');
    expect(JSON.parse(Buffer.from(got[HEADER.settings], 'base64url').toString())).toEqual(defaultTeamSettings());
    expect(got.authorization).toBeUndefined();
  });
});

describe('request ids', () => {
  test('when the client sends X-Request-Id, then the response and the upstream carry it', async () => {
    const res = await call(gw.url, '/v1/cases', { key: team.apiKey, headers: { 'x-request-id': 'client-req-42' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('client-req-42');
    expect(res.body.data.headers['x-request-id']).toBe('client-req-42');
  });

  test('when the client sends none, then one is generated and given to the upstream too', async () => {
    const res = await call(gw.url, '/v1/cases', { key: team.apiKey });
    const id = res.headers.get('x-request-id');
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body.data.headers['x-request-id']).toBe(id);
  });

  test('when a request is refused, then the error carries a request id too', async () => {
    const res = await call(gw.url, '/v1/cases', { headers: { 'x-request-id': 'refused-1' } });
    expect(res.status).toBe(401);
    expect(res.headers.get('x-request-id')).toBe('refused-1');
  });
});

describe('bodies', () => {
  test('when a body is forwarded, then the upstream receives it whole', async () => {
    const body = JSON.stringify({ title: 'x'.repeat(100_000) });
    const res = await call(gw.url, '/v1/deals', { method: 'POST', key: team.apiKey, body });
    expect(res.status).toBe(200);
    expect(res.body.data.bodyBytes).toBe(Buffer.byteLength(body));
  });

  test('when a POST has no body and no content type, then it is forwarded with an empty body', async () => {
    const res = await fetch(`${gw.url}/v1/deals/deal_1/won`, {
      method: 'POST',
      headers: { authorization: `Bearer ${team.apiKey}` },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: unknown }).data).toMatchObject({ method: 'POST', bodyBytes: 0 });
  });

  test('when Content-Length is over 1 MiB, then 413 PAYLOAD_TOO_LARGE', async () => {
    const body = JSON.stringify({ notes: 'x'.repeat(1024 * 1024) });
    const res = await call(gw.url, '/v1/deals', { method: 'POST', key: team.apiKey, body });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(res.headers.get('x-request-id')).toBeTruthy();
  });

  test('when a chunked body grows past 1 MiB, then 413 PAYLOAD_TOO_LARGE', async () => {
    const res = await sendChunked(`${gw.url}/v1/deals`, team.apiKey, 40, 64 * 1024);
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  test('when a chunked body stays under 1 MiB, then it is forwarded', async () => {
    const res = await sendChunked(`${gw.url}/v1/deals`, team.apiKey, 8, 64 * 1024);
    expect(res.status).toBe(200);
    expect(res.body.data.bodyBytes).toBe(8 * 64 * 1024);
  });
});

describe('upstream failures', () => {
  test('when an upstream is down, then 503 SERVICE_UNAVAILABLE in the error envelope', async () => {
    const deadPort = await freePort();
    const down = await startGateway('proxy', { ...allUpstreams(upstream.url), deals: `http://127.0.0.1:${deadPort}` });
    try {
      for (const method of ['GET', 'POST']) {
        const res = await call(down.url, '/v1/deals', {
          method,
          key: team.apiKey,
          body: method === 'POST' ? '{}' : undefined,
        });
        expect(res.status).toBe(503);
        expect(res.body).toEqual({
          success: false,
          error: { code: 'SERVICE_UNAVAILABLE', message: 'Service unavailable', details: {} },
        });
        expect(res.headers.get('x-request-id')).toBeTruthy();
        expect(res.headers.get('ratelimit-limit')).toBe('1000');
      }
      expect((await call(down.url, '/v1/clients', { key: team.apiKey })).status).toBe(200);
    } finally {
      await down.close();
    }
  });

  test('when an upstream does not answer in time, then 503 SERVICE_UNAVAILABLE', async () => {
    const slow = await startGateway('proxy', allUpstreams(upstream.url), { upstreamTimeoutMs: 300 });
    try {
      const res = await call(slow.url, '/v1/deals/hang', { key: team.apiKey });
      expect(res.status).toBe(503);
      expect(res.body.error).toEqual({ code: 'SERVICE_UNAVAILABLE', message: 'Service unavailable', details: {} });
      expect((await call(slow.url, '/v1/deals', { key: team.apiKey })).status).toBe(200);
    } finally {
      await slow.close();
    }
  });
});
