import { createServer } from 'node:http';
import { SpanKind, context, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { Broker } from '../src/messaging/broker.ts';
import { newEvent } from '../src/events.ts';
import { extractTraceContext, injectTraceHeaders, startTelemetry } from '../src/telemetry.ts';
import { waitFor, quietLogger } from '@lpm/test-kit/wait';

it('when an event is published inside a request span, then the consumer span continues the same trace', async () => {
  const exporter = new InMemorySpanExporter();
  const telemetry = startTelemetry({ serviceName: 'telemetry-test', spanExporter: exporter });
  const broker = await Broker.connect({
    url: process.env.AMQP_URL!,
    exchange: 'telemetry-test.events',
    logger: quietLogger,
  });
  try {
    let handlerTraceId: string | undefined;
    const consumer = await broker.consume({
      queue: 'telemetry-test.q',
      bindings: ['case.created'],
      handler: async () => {
        handlerTraceId = trace.getActiveSpan()?.spanContext().traceId;
      },
    });
    const tracer = trace.getTracer('test');
    const requestSpan = tracer.startSpan('POST /cases', { kind: SpanKind.SERVER });
    await context.with(trace.setSpan(context.active(), requestSpan), () =>
      broker.publish(newEvent('case.created', 'team_1', { id: 'case_1' }, null, 'user_1')),
    );
    requestSpan.end();
    await waitFor('the consumer span', () => exporter.getFinishedSpans().some((s) => s.kind === SpanKind.CONSUMER));
    await consumer.cancel();

    const spans = exporter.getFinishedSpans();
    const byKind = (k: SpanKind) => spans.find((s) => s.kind === k) as ReadableSpan;
    const producer = byKind(SpanKind.PRODUCER);
    const consumerSpan = byKind(SpanKind.CONSUMER);
    const traceId = requestSpan.spanContext().traceId;
    expect(producer.spanContext().traceId).toBe(traceId);
    expect(producer.parentSpanContext?.spanId).toBe(requestSpan.spanContext().spanId);
    expect(consumerSpan.spanContext().traceId).toBe(traceId);
    expect(consumerSpan.parentSpanContext?.spanId).toBe(producer.spanContext().spanId);
    expect(consumerSpan.parentSpanContext?.isRemote).toBe(true);
    expect(handlerTraceId).toBe(traceId);
    expect(consumerSpan.attributes).toMatchObject({
      'messaging.system': 'rabbitmq',
      'messaging.destination.name': 'telemetry-test.q',
    });
  } finally {
    await broker.close();
    await telemetry.shutdown();
  }
});

it('when no exporter is configured, then trace context still propagates through headers, and telemetry can start again after shutdown', async () => {
  const saved = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const telemetry = startTelemetry({ serviceName: 'telemetry-test-2' });
  try {
    expect(() => startTelemetry({ serviceName: 'second' })).toThrow(/already started/);
    const span = trace.getTracer('test').startSpan('work');
    const headers: Record<string, unknown> = injectTraceHeaders({}, trace.setSpan(context.active(), span));
    span.end();
    expect(headers.traceparent).toMatch(
      new RegExp(`^00-${span.spanContext().traceId}-${span.spanContext().spanId}-01$`),
    );
    const remote = trace.getSpanContext(extractTraceContext(headers));
    expect(remote).toMatchObject({
      traceId: span.spanContext().traceId,
      spanId: span.spanContext().spanId,
      isRemote: true,
    });
    expect(trace.getSpanContext(extractTraceContext({}))).toBeUndefined();
  } finally {
    await telemetry.shutdown();
    if (saved !== undefined) process.env.OTEL_EXPORTER_OTLP_ENDPOINT = saved;
  }
});

it("when no exporter is configured, then spans record nothing and carry the trace on: the caller's trace and sampled flag, ids of their own", async () => {
  const saved = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const telemetry = startTelemetry({ serviceName: 'telemetry-test-3' });
  try {
    const tracer = trace.getTracer('test');
    for (const flags of ['01', '00']) {
      const caller = extractTraceContext({
        traceparent: `00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-${flags}`,
        tracestate: 'vendor=x',
      });
      const span = tracer.startSpan('handle', { kind: SpanKind.SERVER }, caller);
      expect(span.isRecording()).toBe(false);
      expect(span.spanContext().spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(span.spanContext().spanId).not.toBe('00f067aa0ba902b7');
      const headers = injectTraceHeaders({}, trace.setSpan(caller, span));
      expect(headers).toMatchObject({
        traceparent: `00-4bf92f3577b34da6a3ce929d0e0e4736-${span.spanContext().spanId}-${flags}`,
        tracestate: 'vendor=x',
      });
    }
    // A new trace is sampled, as under the SDK's default sampler; `root` starts one under any parent.
    const root = tracer.startSpan(
      'root',
      { root: true },
      extractTraceContext({ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00' }),
    );
    expect(root.spanContext().traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(root.spanContext().traceId).not.toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(root.spanContext().traceFlags).toBe(1);
    const active = tracer.startActiveSpan('active', (span) => ({ span, current: trace.getActiveSpan() }));
    expect(active.current).toBe(active.span);
  } finally {
    await telemetry.shutdown();
    if (saved !== undefined) process.env.OTEL_EXPORTER_OTLP_ENDPOINT = saved;
  }
});

it('when OTEL_EXPORTER_OTLP_ENDPOINT is set, then finished spans are exported over OTLP/HTTP', async () => {
  const posts: { url: string; body: string }[] = [];
  const collector = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      posts.push({ url: req.url ?? '', body });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => collector.listen(0, '127.0.0.1', () => r()));
  const { port } = collector.address() as { port: number };
  const saved = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${port}`;
  try {
    const telemetry = startTelemetry({ serviceName: 'telemetry-test-otlp' });
    trace.getTracer('test').startSpan('exported-span').end();
    await telemetry.shutdown(); // flushes the batch
    expect(posts).toHaveLength(1);
    expect(posts[0].url).toBe('/v1/traces');
    expect(posts[0].body).toContain('exported-span');
    expect(posts[0].body).toContain('telemetry-test-otlp');
  } finally {
    if (saved === undefined) delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    else process.env.OTEL_EXPORTER_OTLP_ENDPOINT = saved;
    collector.closeAllConnections();
    await new Promise<void>((r) => collector.close(() => r()));
  }
});
