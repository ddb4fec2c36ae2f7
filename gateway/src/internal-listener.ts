// The gateway's /internal/* routes (the user directory the services ask) and its
// /metrics and the orchestrator probes (/health/live, /health/ready) are served on a
// listener of their own (INTERNAL_PORT, reachable by the services, the deployment's
// Prometheus and the kubelet only), never on the public one, where `/health` keeps its
// public meaning: there they do not exist (404 Route not found), whatever token a
// request carries. One app serves both: the internal listener hands its requests to
// the app's router, marked as having come through it.
//
// Which routes are internal is read from each route's template as it is registered,
// and a request is judged by the route the router matched: the router decodes the
// path (`/%6Detrics`) and reads absolute-form targets (`http://x/metrics`), so no
// test of the raw URL can be complete.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { LIVE_PATH, READY_PATH } from '@lpm/shared/http/health';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Served on the internal listener only (set from the route's template here, not by the routes). */
    internalOnly?: boolean;
  }
}

const throughInternal = new WeakSet<IncomingMessage>();

const isInternalTemplate = (url: string) =>
  url.startsWith('/internal/') ||
  url === '/metrics' ||
  url.startsWith('/metrics/') ||
  url === LIVE_PATH ||
  url === READY_PATH;

/** Marks the internal routes (config.internalOnly) as they are registered. Call before any route is. */
export function markInternalRoutes(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    if (isInternalTemplate(route.url)) route.config = { ...route.config, internalOnly: true };
  });
}

/** Whether the request came through the internal listener. */
export const cameThroughInternal = (req: FastifyRequest): boolean => throughInternal.has(req.raw);

/** The internal listener's server (not yet listening): closed with the app. Call before the app listens. */
export function internalServer(app: FastifyInstance): Server {
  const server = createServer((req, res) => {
    throughInternal.add(req);
    app.routing(req, res);
  });
  app.addHook('onClose', async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
  });
  return server;
}
