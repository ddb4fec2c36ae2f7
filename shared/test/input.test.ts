// Hostile input against a real service app (the clients service in process, on
// its own FerretDB database): metadata the store would refuse or that would
// overflow a recursive check, and URLs that do not decode or climb with `..`.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { LightMyRequestResponse } from 'fastify';
import { identityHeaders, type Identity } from '../src/identity.ts';
import { expectError, rawRequest, rawSocketRequest } from '@lpm/test-kit/api';
import { INTERNAL_TOKEN } from '@lpm/test-kit/service-under-test';
import { identity } from '@lpm/test-kit/teams';
import { startClients, type ClientsUnderTest } from '../../services/clients/test/helper.ts';

let sut: ClientsUnderTest;
let who: Identity;
let base: { host: string; port: number };

beforeAll(async () => {
  sut = await startClients();
  await sut.app.listen({ port: 0, host: '127.0.0.1' });
  base = { host: '127.0.0.1', port: (sut.app.server.address() as { port: number }).port };
  who = identity();
});

afterAll(async () => {
  await sut?.close();
});

/** Metadata nested `levels` deep (metadata itself is level 1), as JSON text: a deep value is never built by the test. */
const nestedJson = (levels: number, leaf = '{"leaf":1}') => '{"a":'.repeat(levels - 1) + leaf + '}'.repeat(levels - 1);

const create = (metadataJson: string) =>
  sut.call(who, {
    method: 'POST',
    url: '/v1/clients',
    headers: { 'content-type': 'application/json' },
    payload: `{"type":"PF","name":"Deep","metadata":${metadataJson}}`,
  });

function expectRefused(res: LightMyRequestResponse, message: string) {
  const error = expectError(res, 400, 'VALIDATION_ERROR', message);
  expect(error.details).toMatchObject({ field: 'metadata' });
  expect(res.headers['x-request-id']).toEqual(expect.any(String));
}

const KEYS = 'metadata keys may not start with $ or contain .';
const DEPTH = 'metadata must be nested at most 32 levels';

describe('metadata', () => {
  test.each([
    ['a nested key starting with $', '{"a":{"$where":1}}'],
    ['a nested key containing a dot', '{"a":{"b.c":1}}'],
    ['a top-level key starting with a dot', '{".a":1}'],
    ['a top-level key starting with $', '{"$where":1}'],
    ['a key starting with $ in an object inside an array', '{"a":[1,{"$set":{"x":1}}]}'],
    ['a key with a dot 32 levels down', nestedJson(32, '{"x.y":1}')],
  ])('when metadata has %s, then 400 with the key rule', async (_case, json) => {
    expectRefused(await create(json), KEYS);
  });

  test.each([
    ['an array directly inside an array', '{"a":[[1,2]]}'],
    ['an array inside an array inside an object inside an array', '{"a":[{"b":[1,[2]]}]}'],
  ])('when metadata has %s (which the local store cannot keep), then 400 saying so', async (_case, json) => {
    expectRefused(await create(json), 'metadata may not hold an array directly inside an array');
  });

  test.each([
    [
      'a nested key with a NUL character (the driver cannot encode it)',
      '{"a":{"b\\u0000c":1}}',
      'metadata keys may not contain a null character',
    ],
    ['a top-level key with a NUL character', '{"b\\u0000c":1}', 'metadata keys may not contain a null character'],
    ['an empty nested key', '{"a":{"":1}}', 'metadata keys may not be empty'],
  ])('when metadata has %s, then 400 saying so', async (_case, json, message) => {
    expectRefused(await create(json), message);
  });

  test.each([
    ['33 levels of objects', nestedJson(33)],
    ['33 levels of arrays', `{"a":${'['.repeat(32)}${']'.repeat(32)}}`],
    ['200 levels', nestedJson(200)],
    ['5,000 levels (a 10 KB body)', nestedJson(5000)],
    ['100,000 levels of arrays', `{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`],
  ])('when metadata is nested %s, then 400 with the depth limit', async (_case, json) => {
    expectRefused(await create(json), DEPTH);
  });

  test('when metadata nested too deep also has a $ key, then the depth is what is reported', async () => {
    expectRefused(await create(nestedJson(5000, '{"$where":1}')), DEPTH);
  });

  test('when metadata is over 16 KiB as JSON, then 400 with the size limit', async () => {
    expectRefused(
      await create(JSON.stringify({ a: 'x'.repeat(16 * 1024) })),
      'metadata must be at most 16384 bytes as JSON',
    );
  });

  test('when an update sends a nested $ key, then 400 and the client keeps its metadata', async () => {
    const created = await create('{"kept":true}');
    expect(created.statusCode).toBe(201);
    const id = created.json().data.id;
    const res = await sut.call(who, {
      method: 'PUT',
      url: `/v1/clients/${id}`,
      payload: { metadata: { a: { $inc: { x: 1 } } } },
    });
    expectRefused(res, KEYS);
    const read = await sut.call(who, { method: 'GET', url: `/v1/clients/${id}` });
    expect(read.json().data.metadata).toEqual({ kept: true });
  });

  test('when metadata is nested 32 levels, then it is stored and read back as sent', async () => {
    const json = nestedJson(32, '{"leaf":"two","ok":true,"none":null}');
    const created = await create(json);
    expect(created.statusCode).toBe(201);
    expect(created.json().data.metadata).toEqual(JSON.parse(json));
    const read = await sut.call(who, { method: 'GET', url: `/v1/clients/${created.json().data.id}` });
    expect(read.statusCode).toBe(200);
    expect(read.json().data.metadata).toEqual(JSON.parse(json));
  });

  test('when metadata has nested objects, arrays and keys with $ or dots inside them (not at the start), then it is stored and read back', async () => {
    const metadata = {
      crm: { id: 'x-1', price$: 10, tags: ['a', { 'sub-key': 'v', deep: [{ n: [1, 2] }] }] },
      ação: 'ok',
      count: 3,
    };
    const created = await create(JSON.stringify(metadata));
    expect(created.statusCode).toBe(201);
    const read = await sut.call(who, { method: 'GET', url: `/v1/clients/${created.json().data.id}` });
    expect(read.json().data.metadata).toEqual(metadata);
  });
});

describe('strings', () => {
  test.each([
    ['a field', '{"type":"PF","name":"A\\u0000B"}', 'name'],
    ['a string inside metadata', '{"type":"PF","name":"A","metadata":{"a":{"b":["x","y\\u0000"]}}}', 'metadata.a.b.1'],
  ])(
    'when %s holds a NUL character (which the store cannot keep), then 400 naming it',
    async (_case, payload, field) => {
      const res = await sut.call(who, {
        method: 'POST',
        url: '/v1/clients',
        headers: { 'content-type': 'application/json' },
        payload,
      });
      const error = expectError(res, 400, 'VALIDATION_ERROR', `${field} may not contain a null character`);
      expect(error.details).toMatchObject({ field });
    },
  );

  test('when a string holds an escaped backslash before u0000, then it is text, not a NUL, and is kept', async () => {
    const res = await sut.call(who, {
      method: 'POST',
      url: '/v1/clients',
      headers: { 'content-type': 'application/json' },
      payload: '{"type":"PF","name":"C:\\\\u0000"}',
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().data.name).toBe('C:\\u0000');
  });
});

const raw = (path: string, method = 'GET') =>
  rawRequest(base.port, path, { method, headers: identityHeaders(who, INTERNAL_TOKEN) });

describe('URLs', () => {
  test.each([
    ['a path whose percent-encoding is cut short', '/v1/clients/%E0%A4%A'],
    ['a path with % not followed by hex digits', '/v1/clients/%zz'],
    ['a query whose percent-encoding is cut short', '/v1/clients?search=%E0%A4%A'],
    ['a query with a bare %', '/v1/clients?search=100%'],
  ])(
    'when the request has %s, then 400 Invalid URL encoding in the envelope with X-Request-Id',
    async (_case, path) => {
      for (const method of ['GET', 'DELETE']) {
        const res = await raw(path, method);
        expectError(res, 400, 'VALIDATION_ERROR', 'Invalid URL encoding');
        expect(res.headers['x-request-id']).toEqual(expect.any(String));
      }
    },
  );

  test.each([
    ['a .. segment', '/v1/clients/../webhooks'],
    ['a final .. segment (which would be a client id)', '/v1/clients/..'],
    ['a percent-encoded .. segment', '/v1/clients/%2e%2E/webhooks'],
    ['a half-encoded .. segment', '/v1/clients/.%2e/health'],
    ['.. between backslashes', '/v1/clients/x\\..\\..\\internal\\clients'],
    ['a . segment', '/v1/clients/./list'],
    ['a .. segment before the query', '/v1/clients/..?page=1'],
    ['an encoded NUL', '/v1/clients/cli_%00'],
  ])(
    'when the path has %s (which no route has), then 404 Route not found in the envelope with X-Request-Id',
    async (_case, path) => {
      const res = await raw(path);
      expectError(res, 404, 'NOT_FOUND', 'Route not found');
      expect(res.headers['x-request-id']).toEqual(expect.any(String));
    },
  );

  test('when a path parameter is over 100 characters, then 400 in the envelope with X-Request-Id', async () => {
    const res = await raw(`/v1/clients/${'a'.repeat(101)}`);
    expectError(res, 400, 'VALIDATION_ERROR', 'Path segment too long');
    expect(res.headers['x-request-id']).toEqual(expect.any(String));
  });

  test('when the client sends X-Request-Id with a bad URL, then the error echoes it', async () => {
    const res = await rawRequest(base.port, '/v1/clients/%E0%A4%A', {
      headers: { ...identityHeaders(who, INTERNAL_TOKEN), 'x-request-id': 'hostile-1' },
    });
    expect(res.headers['x-request-id']).toBe('hostile-1');
  });

  test.each([
    ['a request line that is not HTTP', 'GET foo\r\n\r\n', 400, 'Malformed HTTP request'],
    [
      'a header line without a colon',
      'GET /v1/clients HTTP/1.1\r\nHost: x\r\nbroken header\r\n\r\n',
      400,
      'Malformed HTTP request',
    ],
    [
      'a header past the size limit',
      `GET /v1/clients HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      431,
      'Request headers too large',
    ],
  ])(
    'when Node refuses to parse %s, then %i in the envelope with X-Request-Id',
    async (_case, bytes, status, message) => {
      const res = await rawSocketRequest(base.port, bytes);
      expectError(res, status, 'VALIDATION_ERROR', message);
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    },
  );

  test('when the query has an encoded NUL, then 400 in the envelope', async () => {
    const res = await raw('/v1/clients?search=a%00b');
    expectError(res, 400, 'VALIDATION_ERROR', 'URL may not contain a null character');
    expect(res.headers['x-request-id']).toEqual(expect.any(String));
  });

  test('when the path and query are well encoded, with dots inside segments, then the route answers', async () => {
    const list = await raw('/v1/clients?search=Jos%C3%A9%20da%20Silva');
    expect(list.status).toBe(200);
    const missing = await raw('/v1/clients/cli_a.b..c');
    expectError(missing, 404, 'NOT_FOUND', 'Client not found');
  });
});
