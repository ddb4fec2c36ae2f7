// The routes served without a key cost the gateway little and are
// bounded. The OpenAPI document is built once and again only when a service's
// document changes, and a broken one never takes it away; /health answers from a
// check at most about a second old, one at a time; and each client address has a
// limit on these routes (429 in the envelope, with Retry-After).
import { randomBytes } from 'node:crypto';
import { get } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { parse } from 'yaml';
import { waitFor } from '@lpm/test-kit/wait';
import { ServedDocument } from '../src/openapi/served-document.ts';
import {
  allUpstreams,
  call,
  expectThrottled,
  gatewayForSuite,
  newTeam,
  sleep,
  startGateway,
  type EchoUpstream,
  type TestGateway,
} from './support.ts';

/** A service whose /openapi.json answers `doc` (a text, as sent) with `status`, counting its reads. */
async function startDocumentUpstream() {
  const app: FastifyInstance = Fastify({ logger: false, forceCloseConnections: true });
  const state = { doc: JSON.stringify({ openapi: '3.1.0', paths: {} }), status: 200, reads: 0 };
  app.get('/openapi.json', async (_req, reply) => {
    state.reads++;
    return reply.status(state.status).type('application/json').send(state.doc);
  });
  app.get('/health', async () => ({ success: true }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { url: `http://127.0.0.1:${(app.server.address() as { port: number }).port}`, app, state };
}

const json = (schema: object) => ({ content: { 'application/json': { schema } } });
/** A documented operation of the clients service (its contract/client-operations.ts). */
const WITH_LIST = JSON.stringify({
  openapi: '3.1.0',
  tags: [{ name: 'Clients', description: 'Clients.', 'x-prefix': '/v1/clients' }],
  paths: {
    '/v1/clients': {
      get: {
        operationId: 'listClients',
        summary: 'List clients',
        description: 'The clients.',
        responses: { 200: json({ type: 'object' }) },
      },
    },
  },
});
/** An operation the gateway has no documentation for: the builder refuses the set. */
const UNDOCUMENTED = JSON.stringify({
  openapi: '3.1.0',
  paths: { '/v1/clients/{id}/nowhere': { get: { responses: {} } } },
});

/** A client address of its own per run: the counts live in Redis for a minute. */
const newAddress = () => `10.${[...randomBytes(3)].join('.')}`;
/** Where the per-address limit is not the subject: every request here comes from 127.0.0.1. */
const UNLIMITED = { publicRateLimit: 1_000_000 };

describe('GET /v1/openapi.json and .yaml', () => {
  let docs: Awaited<ReturnType<typeof startDocumentUpstream>>;
  let gw: TestGateway;

  beforeAll(async () => {
    docs = await startDocumentUpstream();
    gw = await startGateway('public-routes', allUpstreams(docs.url), {
      ...UNLIMITED,
      deployed: ['clients'],
      openApiRefreshMs: 300,
    });
  });

  afterAll(async () => {
    await gw?.close();
    await docs?.app.close();
  });

  const served = async () => {
    const [doc, yaml] = await Promise.all([call(gw.url, '/v1/openapi.json'), fetch(`${gw.url}/v1/openapi.yaml`)]);
    return {
      status: [doc.status, yaml.status],
      paths: Object.keys(doc.body.paths ?? {}).sort(),
      sameYaml: JSON.stringify(parse(await yaml.text())) === JSON.stringify(doc.body),
    };
  };
  /** Until the service's document was read twice more: a refresh begun after now has settled. */
  const refreshed = async () => {
    const reads = docs.state.reads;
    await waitFor('the document read again', async () => {
      await call(gw.url, '/v1/openapi.json');
      return docs.state.reads >= reads + 2;
    });
  };

  test('when a client accepts brotli or gzip, then the document comes compressed in the coding it prefers, the same bytes once decoded', async () => {
    const raw = (path: string, acceptEncoding: string) =>
      new Promise<{ coding: string | undefined; vary: string | undefined; body: Buffer }>((resolve, reject) => {
        get(`${gw.url}${path}`, { headers: { 'accept-encoding': acceptEncoding } }, (res) => {
          const chunks: Buffer[] = [];
          res
            .on('data', (c: Buffer) => chunks.push(c))
            .on('end', () =>
              resolve({ coding: res.headers['content-encoding'], vary: res.headers.vary, body: Buffer.concat(chunks) }),
            );
        }).on('error', reject);
      });
    for (const path of ['/v1/openapi.yaml', '/v1/openapi.json']) {
      const plain = await raw(path, 'identity');
      expect([plain.coding, plain.vary]).toEqual([undefined, 'accept-encoding']);
      const br = await raw(path, 'gzip, deflate, br');
      expect(br.coding).toBe('br');
      expect(brotliDecompressSync(br.body).equals(plain.body)).toBe(true);
      expect(br.body.length).toBeLessThan(plain.body.length);
      const gz = await raw(path, 'br;q=0, gzip');
      expect(gz.coding).toBe('gzip');
      expect(gunzipSync(gz.body).equals(plain.body)).toBe(true);
      expect((await raw(path, 'compress')).coding).toBeUndefined();
    }
  });

  test('when a service breaks its document after a first good build, then the last good one is still served; a changed one is served after the refresh', async () => {
    const first = await served();
    expect(first).toEqual({ status: [200, 200], paths: expect.arrayContaining(['/v1/settings']), sameYaml: true });
    expect(first.paths).not.toContain('/v1/clients');

    for (const [broken, status] of [
      [UNDOCUMENTED, 200],
      ['{"paths": {', 200],
      ['', 500],
    ] as const) {
      docs.state.doc = broken;
      docs.state.status = status;
      await refreshed();
      expect([broken, await served()]).toEqual([broken, first]);
    }

    docs.state.doc = WITH_LIST;
    docs.state.status = 200;
    await waitFor('the changed document served', async () => (await served()).paths.includes('/v1/clients'), 10_000);
    expect(await served()).toEqual({
      status: [200, 200],
      paths: [...first.paths, '/v1/clients'].sort(),
      sameYaml: true,
    });
  });

  test('when the document is asked for many times within the refresh period (5 s), then the services are read once for all of them', async () => {
    const one = await startDocumentUpstream();
    const fresh = await startGateway('public-routes', allUpstreams(one.url), { ...UNLIMITED, deployed: ['clients'] });
    try {
      expect((await call(fresh.url, '/v1/openapi.json')).status).toBe(200);
      const paths = Array.from({ length: 20 }, (_, i) => (i % 2 ? '/v1/openapi.json' : '/v1/openapi.yaml'));
      const answers = await Promise.all(
        paths.map((path) => fetch(`${fresh.url}${path}`).then(async (r) => [r.status, (await r.text()).length > 0])),
      );
      expect(answers).toEqual(Array(20).fill([200, true]));
      expect(one.state.reads).toBe(1);
    } finally {
      await fresh.close();
      await one.app.close();
    }
  });

  test('when no service ever gave a document the builder accepts, then 503 in the envelope, never 500', async () => {
    const bad = await startDocumentUpstream();
    bad.state.doc = UNDOCUMENTED;
    const fresh = await startGateway('public-routes', allUpstreams(bad.url), { ...UNLIMITED, deployed: ['clients'] });
    try {
      for (const path of ['/v1/openapi.json', '/v1/openapi.yaml']) {
        const res = await call(fresh.url, path);
        expect([path, res.status, res.body]).toEqual([
          path,
          503,
          { success: false, error: { code: 'SERVICE_UNAVAILABLE', message: 'Service unavailable', details: {} } },
        ]);
      }
      bad.state.doc = WITH_LIST;
      expect((await call(fresh.url, '/v1/openapi.json')).status).toBe(200);
    } finally {
      await fresh.close();
      await bad.app.close();
    }
  });
});

describe('ServedDocument', () => {
  const logger = { warn: () => {} };

  test('when the sources are read again and have not changed, then the document is not built again; when one changed, it is', async () => {
    const texts = ['{"paths":{"/a":{}}}', '{"paths":{"/b":{}}}'];
    let builds = 0;
    const doc = new ServedDocument({
      sources: texts.map((_, i) => ({ name: `s${i}`, read: async () => texts[i] })),
      build: (documents) => ({ paths: Object.assign({}, ...documents.map((d) => d.paths)), build: ++builds }),
      refreshMs: 0,
      logger,
    });
    const first = await doc.current();
    expect(JSON.parse(first.json.identity.toString())).toEqual({ paths: { '/a': {}, '/b': {} }, build: 1 });
    for (let i = 0; i < 5; i++) {
      await doc.current();
      await sleep(5);
    }
    expect(builds).toBe(1);
    expect(first.yaml).toBe(first.yaml);
    texts[1] = '{"paths":{"/c":{}}}';
    await doc.current();
    await sleep(5);
    expect(JSON.parse((await doc.current()).json.identity.toString())).toEqual({
      paths: { '/a': {}, '/c': {} },
      build: 2,
    });
  });

  test('when a source stops answering, then its last document is built with the others', async () => {
    const texts: (string | null)[] = ['{"paths":{"/a":{}}}', '{"paths":{"/b":{}}}'];
    const doc = new ServedDocument({
      sources: texts.map((_, i) => ({ name: `s${i}`, read: async () => texts[i] })),
      build: (documents) => ({ paths: Object.assign({}, ...documents.map((d) => d.paths)) }),
      refreshMs: 0,
      logger,
    });
    await doc.current();
    texts[0] = null;
    texts[1] = '{"paths":{"/c":{}}}';
    await doc.current();
    await sleep(5);
    expect(JSON.parse((await doc.current()).json.identity.toString())).toEqual({ paths: { '/a': {}, '/c': {} } });
  });
});

describe('GET /health', () => {
  let up: EchoUpstream;
  let gw: TestGateway;

  gatewayForSuite('public-routes', (started) => void ({ upstream: up, gw } = started), {
    echo: 'health',
    overrides: { ...UNLIMITED, deployed: ['clients'] },
  });

  test('when many callers ask at once, then one check answers them all, and its answer serves for about a second', async () => {
    const before = up.state.healthChecks;
    const answers = await Promise.all(Array.from({ length: 20 }, () => call(gw.url, '/health')));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(up.state.healthChecks - before).toBe(1);
    expect((await call(gw.url, '/health')).status).toBe(200);
    expect(up.state.healthChecks - before).toBe(1);
  });

  test('when the state changes, then /health says so within about a second, with one check a second however often it is polled', async () => {
    await sleep(1100);
    // A check of its own, answered again for a second.
    expect((await call(gw.url, '/health')).status).toBe(200);
    const before = up.state.healthChecks;
    up.state.healthStatus = 503;
    try {
      const started = Date.now();
      let polls = 0;
      while ((await call(gw.url, '/health')).status !== 503) {
        polls++;
        await sleep(20);
        expect(Date.now() - started).toBeLessThan(5000);
      }
      expect(Date.now() - started).toBeLessThan(2500);
      // Polled every 20 ms meanwhile, answered from the kept check, and the service checked once or twice.
      expect(polls).toBeGreaterThan(5);
      expect(up.state.healthChecks - before).toBeLessThanOrEqual(2);
    } finally {
      up.state.healthStatus = 200;
    }
  });
});

describe('the limit per client address on the routes served without a key', () => {
  const LIMIT = 5;
  let gw: TestGateway;

  gatewayForSuite('public-routes', (started) => void (gw = started.gw), {
    echo: 'limited',
    overrides: { deployed: ['clients'], trustedProxies: ['127.0.0.1'], publicRateLimit: LIMIT },
  });

  test('when an address passes the limit, then 429 in the envelope with Retry-After on every public route; another address, the API and the internal listener are not affected', async () => {
    const address = newAddress();
    const from = (a: string) => ({ 'x-forwarded-for': a });
    const statusOf = async (path: string) => {
      const res = await fetch(`${gw.url}${path}`, { headers: from(address) });
      await res.body?.cancel();
      return res.status;
    };
    for (const path of ['/health', '/docs', '/docs/init.js', '/v1/openapi.json', '/health'])
      expect([path, await statusOf(path)]).toEqual([path, 200]);
    for (const path of ['/health', '/v1/openapi.yaml', '/docs']) {
      const res = await call(gw.url, path, { headers: from(address) });
      expectThrottled(res, { message: 'Rate limit exceeded', reason: 'public_requests' }, LIMIT, 60);
    }
    expect((await call(gw.url, '/health', { headers: from(newAddress()) })).status).toBe(200);
    expect((await call(gw.internalUrl, '/health', { headers: from(address) })).status).toBe(200);
    const team = await newTeam(gw.accounts, 'enterprise');
    expect((await call(gw.url, '/v1/clients', { key: team.apiKey, headers: from(address) })).status).toBe(200);
  });
});
