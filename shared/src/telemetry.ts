// OpenTelemetry bootstrap: a tracer provider, W3C trace-context propagation and an
// AsyncLocalStorage context manager. No auto-instrumentation: spans come from the
// broker (publish/consume) and whatever the services create themselves.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  context,
  propagation,
  trace,
  type Context,
  type ContextManager,
  type Span,
  type SpanOptions,
  type TextMapGetter,
  type Tracer,
  type TracerProvider as ApiTracerProvider,
} from '@opentelemetry/api';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  RandomIdGenerator,
  SimpleSpanProcessor,
  TracerProvider,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { COUNT_COMMANDS_HEADER, countedContext } from './counted-requests.ts';

export interface TelemetryOptions {
  serviceName: string;
  /** Export to this exporter, synchronously on span end (tests pass an InMemorySpanExporter). */
  spanExporter?: SpanExporter;
}

export interface Telemetry {
  shutdown(): Promise<void>;
}

// The equivalent of @opentelemetry/context-async-hooks, kept here so shared does not
// depend on a package it only gets transitively. bind() covers functions only
// (EventEmitter binding is for auto-instrumentations, which we do not load).
class AlsContextManager implements ContextManager {
  private als = new AsyncLocalStorage<Context>();

  active(): Context {
    return this.als.getStore() ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    const cb = thisArg == null ? fn : (fn.bind(thisArg) as F);
    return this.als.run(ctx, cb, ...args);
  }

  bind<T>(ctx: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const fn = target as unknown as (...args: unknown[]) => unknown;
    const inContext = (call: () => unknown) => this.with(ctx, call);
    return function (this: unknown, ...args: unknown[]) {
      return inContext(() => fn.apply(this, args));
    } as unknown as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.als.disable();
    return this;
  }
}

/**
 * Where nothing exports spans: each span only carries the trace on, with an id of
 * its own and its caller's sampled flag (a new trace is sampled, as under the SDK's
 * default sampler), so trace context still propagates through requests and events
 * and a neighbour that exports still records its part, while nothing is recorded
 * for nobody: no span object, attributes or clock readings per request and message
 * (in the gateway, about 3.5 KB of the 60 KB allocated per proxied request).
 */
class PropagatingTracer implements Tracer {
  private readonly ids = new RandomIdGenerator();

  startSpan(_name: string, options?: SpanOptions, ctx: Context = context.active()): Span {
    const parent = options?.root ? undefined : trace.getSpanContext(ctx);
    const inherited = parent && trace.isSpanContextValid(parent) ? parent : undefined;
    return trace.wrapSpanContext({
      traceId: inherited?.traceId ?? this.ids.generateTraceId(),
      spanId: this.ids.generateSpanId(),
      traceFlags: inherited?.traceFlags ?? TraceFlags.SAMPLED,
      traceState: inherited?.traceState,
    });
  }

  startActiveSpan<F extends (span: Span) => unknown>(
    name: string,
    ...rest: [F] | [SpanOptions, F] | [SpanOptions, Context, F]
  ): ReturnType<F> {
    const fn = rest[rest.length - 1] as F;
    const options = rest.length > 1 ? (rest[0] as SpanOptions) : undefined;
    const ctx = rest.length > 2 ? (rest[1] as Context) : context.active();
    const span = this.startSpan(name, options, ctx);
    return context.with(trace.setSpan(ctx, span), fn as (span: Span) => ReturnType<F>, undefined, span);
  }
}

class PropagatingTracerProvider implements ApiTracerProvider {
  private readonly tracer = new PropagatingTracer();

  getTracer(): Tracer {
    return this.tracer;
  }

  async shutdown(): Promise<void> {}
}

/**
 * Registers the global tracer provider, propagator and context manager (the
 * OpenTelemetry API keeps these process-wide, so start at most one at a time;
 * shutdown() unregisters them so another can be started, e.g. in tests).
 */
export function startTelemetry(opts: TelemetryOptions): Telemetry {
  const processors: SpanProcessor[] = [];
  if (opts.spanExporter) processors.push(new SimpleSpanProcessor({ exporter: opts.spanExporter }));
  else if (process.env.OTEL_EXPORTER_OTLP_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) {
    // The exporter reads the endpoint (and headers) from the OTEL_* environment itself.
    processors.push(new BatchSpanProcessor({ exporter: new OTLPTraceExporter() }));
  }
  const provider = processors.length
    ? new TracerProvider({
        resource: defaultResource().merge(resourceFromAttributes({ 'service.name': opts.serviceName })),
        spanProcessors: processors,
      })
    : new PropagatingTracerProvider();
  const contextManager = new AlsContextManager();
  const registered = {
    context: context.setGlobalContextManager(contextManager),
    propagation: propagation.setGlobalPropagator(
      new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
    ),
    trace: trace.setGlobalTracerProvider(provider),
  };
  if (!registered.context || !registered.propagation || !registered.trace) {
    // Undo only what this call registered; the rest belongs to whoever started first.
    if (registered.context) context.disable();
    if (registered.propagation) propagation.disable();
    if (registered.trace) trace.disable();
    void provider.shutdown();
    throw new Error('telemetry already started in this process; shut the other one down first');
  }
  let stopped = false;
  return {
    async shutdown() {
      if (stopped) return;
      stopped = true;
      try {
        await provider.shutdown();
      } finally {
        trace.disable();
        propagation.disable();
        context.disable();
        contextManager.disable();
      }
    },
  };
}

const headerGetter: TextMapGetter<Record<string, unknown>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const v = carrier[key];
    if (typeof v === 'string') return v;
    if (Buffer.isBuffer(v)) return v.toString('utf8');
    return undefined;
  },
};

/** Writes the trace context of `ctx` (default: the active one) into message headers; returns them. */
export function injectTraceHeaders<H extends Record<string, unknown>>(headers: H, ctx: Context = context.active()): H {
  propagation.inject(ctx, headers, {
    set: (carrier, key, value) => {
      (carrier as Record<string, unknown>)[key] = value;
    },
  });
  return headers;
}

/** The remote context carried by message headers (ROOT when there is none). */
export function extractTraceContext(headers: Record<string, unknown> | undefined | null): Context {
  return propagation.extract(ROOT_CONTEXT, headers ?? {}, headerGetter);
}

type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Wraps an HTTP request listener so each request runs inside a SERVER span whose
 * parent is the caller's `traceparent`; everything the request does (store calls,
 * outgoing requests, events written) sees that span as active. A request with the
 * header of counted-requests.ts has its store commands counted until its answer,
 * when `mayCount` admits it (the gateway: only with the internal credential).
 */
export function tracedRequestListener(
  serviceName: string,
  listener: RequestListener,
  mayCount: (req: IncomingMessage) => boolean = () => true,
): RequestListener {
  const tracer = trace.getTracer(serviceName);
  return (req, res) => {
    const parent = extractTraceContext(req.headers);
    const span = tracer.startSpan(`${req.method} ${(req.url ?? '/').split('?')[0]}`, { kind: SpanKind.SERVER }, parent);
    let active = trace.setSpan(parent, span);
    if (req.headers[COUNT_COMMANDS_HEADER] !== undefined && mayCount(req)) {
      const counted = countedContext(active, span.spanContext().traceId);
      active = counted.ctx;
      res.once('finish', counted.answered);
    }
    res.once('close', () => {
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    context.with(active, () => listener(req, res));
  };
}

/** The active trace context as headers, to store beside work done later (an outbox event). */
export const currentTraceHeaders = (): Record<string, string> => injectTraceHeaders<Record<string, string>>({});
