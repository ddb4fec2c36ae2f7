// The gateway's /internal/* routes (the user directory the services ask) and its
// /metrics are served on a listener of their own (INTERNAL_PORT, reachable by the
// services and the deployment's Prometheus only), never on the public one: there
// they do not exist (404 Route not found), whatever token a request carries. One
// app serves both: the internal listener hands its requests to the app's router,
// marked as having come through it.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { notFound } from '@lpm/shared/errors';

const throughInternal = new WeakSet<IncomingMessage>();

/** Refuses /internal/* and /metrics on every request that did not come through the internal listener. Add before any other hook. */
export function internalRoutesOffPublic(app: FastifyInstance): void {
  app.addHook('onRequest', async (req) => {
    if ((req.url.startsWith('/internal/') || req.url.startsWith('/metrics')) && !throughInternal.has(req.raw)) throw notFound('Route not found');
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
