// What every domain service's HTTP app starts with: the shared app (envelopes,
// request ids, errors), the gateway's credential on every route but the public
// ones, Idempotency-Key on POSTs, /health over the service's database, and the
// process's metrics at /internal/metrics.
import type { FastifyInstance } from 'fastify';
import type { Db } from 'mongodb';
import { createHttpApp, type HttpAppOptions } from './app.ts';
import { requireGateway } from './gateway-auth.ts';
import { idempotentPosts, type Sealer } from './idempotency.ts';
import { healthRoute } from './health.ts';
import { metrics } from '../metrics.ts';

export interface ServiceAppOptions {
  name: string;
  db: Db;
  internalToken: string;
  /** Seals the answers kept for Idempotency-Key replays (a service whose answers carry secrets). */
  idempotencySealer?: Sealer;
  logger?: HttpAppOptions['logger'];
  loggerInstance?: HttpAppOptions['loggerInstance'];
}

export function createServiceApp(opts: ServiceAppOptions): FastifyInstance {
  const app = createHttpApp({ name: opts.name, logger: opts.logger, loggerInstance: opts.loggerInstance });
  requireGateway(app, opts.internalToken);
  idempotentPosts(app, opts.db, opts.idempotencySealer);
  healthRoute(app, async () => {
    await opts.db.command({ ping: 1 });
  });
  app.get('/internal/metrics', { schema: { hide: true } }, async (_req, reply) => reply.type(metrics.contentType).send(await metrics.metrics()));
  return app;
}
