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
const throughInternal = new WeakSet<IncomingMessage>();

/** Refuses /internal/*, /metrics and the probes on every request that did not come through the internal listener. Add before any other hook. */
export function internalRoutesOffPublic(app: FastifyInstance): void {
  app.addHook('onRequest', async (req) => {
    const internalOnly = req.url.startsWith(INTERNAL_PREFIX) || req.url.startsWith('/metrics') || PROBES.has(req.routeOptions.url ?? '');
    if (internalOnly && !throughInternal.has(req.raw)) throw notFound('Route not found');
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
