// One trace to the receiver. The whole system exports its spans to an
// OTLP/HTTP collector this test runs (OTEL_EXPORTER_OTLP_ENDPOINT). A client write
// sent with a `traceparent` is found, under that one trace id, on the gateway's
// span, the service's span, the outbox publish, the webhooks fan-out consumer and
// the webhook POST; and the HTTPS receiver gets the same trace id in `traceparent`.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { startHttpsReceiver, type HttpsReceiver } from '@lpm/test-kit/https-receiver';
import { waitFor } from '@lpm/test-kit/wait';
import type { RunningSystem } from '@lpm/test-kit/running-system';
import { systemAndCompanionsForSuite } from '@lpm/test-kit/system-and-companions';

interface ExportedSpan {
  service: string;
  name: string;
  kind: number;
  traceId: string;
}

/** SpanKind in OTLP: 2 server, 3 client, 4 producer, 5 consumer. */
const KIND = { server: 2, client: 3, producer: 4, consumer: 5 };

let collector: Server;
const spans: ExportedSpan[] = [];
let sys: RunningSystem;
let receiver: HttpsReceiver;

/** OTLP/JSON ids are hex (the spec), some encoders send base64: both as hex. */
const hexId = (id: string) =>
  /^[0-9a-f]{32}$/i.test(id) ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex');

/** An OTLP/HTTP trace receiver taking JSON (the exporter's default encoding here). */
async function startCollector(): Promise<number> {
  collector = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      if (req.url === '/v1/traces' && (req.headers['content-type'] ?? '').includes('json')) {
        const { resourceSpans = [] } = JSON.parse(body);
        for (const rs of resourceSpans) {
          const service =
            rs.resource?.attributes?.find((a: { key: string }) => a.key === 'service.name')?.value?.stringValue ?? '?';
          for (const ss of rs.scopeSpans ?? [])
            for (const s of ss.spans ?? [])
              spans.push({ service, name: s.name, kind: s.kind, traceId: hexId(s.traceId) });
        }
      } else if (req.url === '/v1/traces') {
        spans.push({ service: '?', name: `unreadable ${req.headers['content-type']}`, kind: 0, traceId: '' });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  return (collector.address() as { port: number }).port;
}

systemAndCompanionsForSuite('tracing', {
  async start() {
    const port = await startCollector();
    receiver = await startHttpsReceiver();
    return {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '200',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    };
  },
  ready(started) {
    sys = started;
  },
  async close() {
    await receiver?.close();
    await new Promise((r) => collector?.close(r));
  },
});

test('when a client is created with a traceparent, then one trace id runs from the gateway to the webhook POST, and the receiver gets it', async () => {
  const key = sys.team('Rastreada').api_key;
  const hook = await sys.call(key, 'POST', '/v1/webhooks', {
    url: `${receiver.url}/trace`,
    events: ['client.created'],
  });
  expect(hook.status).toBe(201);

  const traceId = randomBytes(16).toString('hex');
  const res = await sys.request('/v1/clients', {
    method: 'POST',
    key,
    headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
    body: JSON.stringify({ type: 'PF', name: 'Cliente rastreado' }),
  });
  expect(res.status).toBe(201);

  await waitFor(
    'the webhook POST',
    () => receiver.requests.some((r) => r.path === '/trace' && JSON.parse(r.body).type === 'client.created'),
    30_000,
  );
  const post = receiver.requests.find((r) => r.path === '/trace' && JSON.parse(r.body).type === 'client.created')!;
  expect(String(post.headers.traceparent).split('-')[1]).toBe(traceId);

  const inTrace = () => spans.filter((s) => s.traceId === traceId);
  const has = (service: string, kind: number, name: RegExp) =>
    inTrace().some((s) => s.service === service && s.kind === kind && name.test(s.name));
  const expected = {
    'gateway span': () => has('gateway', KIND.server, /^POST \/v1\/clients$/),
    'clients span': () => has('clients', KIND.server, /^POST \/v1\/clients$/),
    'outbox publish': () => has('clients', KIND.producer, /^publish /),
    'fan-out consumer': () => has('webhooks', KIND.consumer, /webhooks\.fan-out$/),
    'webhook POST': () => has('webhooks', KIND.client, /^webhook POST$/),
  };
  const missing = () =>
    Object.entries(expected)
      .filter(([, found]) => !found())
      .map(([what]) => what);
  await waitFor('every span of the trace exported', () => missing().length === 0, 30_000).catch(() => {});
  expect({ missing: missing(), spans: inTrace().map((s) => `${s.service} ${s.name}`) }).toEqual({
    missing: [],
    spans: expect.any(Array),
  });
}, 120_000);
