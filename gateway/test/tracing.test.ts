import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { startTelemetry, type Telemetry } from '@lpm/shared/telemetry';
import { call, gatewayForSuite, newTeam, type Echo, type TestGateway } from './support.ts';

const exporter = new InMemorySpanExporter();
let telemetry: Telemetry;
let gw: TestGateway;

beforeAll(() => {
  telemetry = startTelemetry({ serviceName: 'gateway-test', spanExporter: exporter });
});

gatewayForSuite('tracing', (started) => void (gw = started.gw));

afterAll(async () => {
  await telemetry?.shutdown();
});

test('when a request carries a traceparent, then the upstream continues the gateway span of the same trace', async () => {
  const team = await newTeam(gw.accounts, 'enterprise');
  const traceId = '0af7651916cd43dd8448eb211c80319c';
  const res = await call(gw.url, '/v1/clients', {
    headers: { authorization: `Bearer ${team.apiKey}`, traceparent: `00-${traceId}-b7ad6b7169203331-01` },
  });
  expect(res.status).toBe(200);
  const forwarded = String((res.body.data as Echo).headers.traceparent);
  const [, upstreamTrace, upstreamParent] = forwarded.split('-');
  expect(upstreamTrace).toBe(traceId);
  const server = exporter
    .getFinishedSpans()
    .find((s) => s.kind === SpanKind.SERVER && s.spanContext().traceId === traceId);
  expect(server?.spanContext().spanId).toBe(upstreamParent);
  expect(server?.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
});
