import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { createHttpApp } from '../src/http/app.ts';
import { newEvent, type DomainEvent } from '../src/events.ts';
import { startTelemetry } from '../src/telemetry.ts';

test('when a request carries a traceparent, then the server span continues it and events written by the request carry it', async () => {
  const exporter = new InMemorySpanExporter();
  const telemetry = startTelemetry({ serviceName: 'http-tracing-test', spanExporter: exporter });
  const app = createHttpApp({ name: 'http-tracing-test', logger: false });
  let written: DomainEvent | undefined;
  app.post('/v1/things', async () => {
    written = newEvent('client.created', 'team_1', { id: 'cli_1' }, null, 'user_1');
    return { success: true, data: {} };
  });
  try {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as { port: number };
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parentId = '00f067aa0ba902b7';
    const res = await fetch(`http://127.0.0.1:${port}/v1/things`, {
      method: 'POST',
      headers: { traceparent: `00-${traceId}-${parentId}-01`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(200);
    const deadline = Date.now() + 5000;
    while (!exporter.getFinishedSpans().length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const server = exporter.getFinishedSpans().find((s) => s.kind === SpanKind.SERVER);
    expect(server?.spanContext().traceId).toBe(traceId);
    expect(server?.parentSpanContext?.spanId).toBe(parentId);
    expect(server?.attributes['http.response.status_code']).toBe(200);
    expect(written?.trace?.traceparent).toContain(traceId);
  } finally {
    await app.close();
    await telemetry.shutdown();
  }
});
