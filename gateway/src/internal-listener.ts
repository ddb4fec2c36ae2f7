// The gateway's /internal/* routes (the user directory the services ask) and its
// /metrics and the orchestrator probes (/health/live, /health/ready) are served on a
// listener of their own (INTERNAL_PORT, reachable by the services, the deployment's
// Prometheus and the kubelet only), never on the public one, where `/health` keeps its
// public meaning: there they do not exist (404 Route not found), whatever token a
// request carries. One app serves both: the internal listener hands its requests to
// the app's router, marked as having come through it.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { notFound } from '@lpm/shared/errors';
import { LIVE_PATH, READY_PATH } from '@lpm/shared/http/health';

const INTERNAL_PREFIX = '/internal/';
const PROBES = new Set([LIVE_PATH, READY_PATH]);
/** What every probe's path starts with. */
const PROBES_PREFIX = '/health/';
const throughInternal = new WeakSet<IncomingMessage>();

/** Refuses /internal/*, /metrics and the probes on every request that did not come through the internal listener. Add before any other hook. */
export function internalRoutesOffPublic(app: FastifyInstance): void {
  // Not async, and the route's options (built anew on each read) read for probe paths only: this runs on every request.
  app.addHook('onRequest', (req, _reply, done) => {
    const { url } = req;
    const internalOnly =
      url.startsWith(INTERNAL_PREFIX) || url.startsWith('/metrics') || (url.startsWith(PROBES_PREFIX) && PROBES.has(req.routeOptions.url ?? ''));
    done(internalOnly && !throughInternal.has(req.raw) ? notFound('Route not found') : undefined);
  });
}

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
