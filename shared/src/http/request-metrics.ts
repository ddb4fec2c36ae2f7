// Every route's requests timed into http_request_duration_seconds, labelled with
// the route's template (never the raw path), and the process's /metrics route.
// The hook is attached to each route as it is registered, with its labels bound
// there, so a request pays one observation and no route lookup. Requests that
// match no route (404 from the not-found handler) are not timed.
import type { FastifyInstance, FastifyReply, FastifyRequest, onResponseHookHandler } from 'fastify';
import { Histogram } from 'prom-client';
import { LATENCY_BUCKETS, metrics } from '../metrics.ts';
import { commandsOfTrace } from '../counted-requests.ts';

const requestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'Time from a request received to its answer sent, by service, route template, method and status class',
  labelNames: ['service', 'route', 'method', 'status_class'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [metrics],
});

type Observe = (seconds: number) => void;
const STATUS_CLASSES = ['0xx', '1xx', '2xx', '3xx', '4xx', '5xx'];

/** Call before any route is registered: routes of plugins registered later are timed too. */
export function timeRequests(app: FastifyInstance, service: string): void {
  app.addHook('onRoute', (route) => {
    const byMethod = new Map<string, Observe[]>();
    const observer = (method: string, status: number): Observe => {
      let byClass = byMethod.get(method);
      if (!byClass) byMethod.set(method, (byClass = []));
      const i = Math.min(Math.trunc(status / 100), 5);
      let observe = byClass[i];
      if (!observe) {
        const child = requestDuration.labels({ service, route: route.url, method, status_class: STATUS_CLASSES[i] });
        byClass[i] = observe = (seconds) => child.observe(seconds);
      }
      return observe;
    };
    const timed: onResponseHookHandler = (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
      observer(req.method, reply.statusCode)(reply.elapsedTime / 1000);
      done();
    };
    const own = route.onResponse;
    route.onResponse = own === undefined ? [timed] : Array.isArray(own) ? [...own, timed] : [own, timed];
  });
}

/**
 * GET /metrics in Prometheus' text format, and GET /metrics/commands/<trace id>, the
 * store commands counted for a trace (counted-requests.ts) as JSON, both without
 * credentials: serve them only on a listener the public does not reach.
 */
export function metricsRoute(app: FastifyInstance): void {
  app.get('/metrics', { config: { public: true }, schema: { hide: true }, logLevel: 'warn' }, async (_req, reply) =>
    reply.type(metrics.contentType).send(await metrics.metrics()),
  );
  app.get<{ Params: { trace: string } }>(
    '/metrics/commands/:trace',
    { config: { public: true }, schema: { hide: true }, logLevel: 'warn' },
    async (req) => commandsOfTrace(req.params.trace),
  );
}
