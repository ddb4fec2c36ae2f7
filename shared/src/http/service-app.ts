// What every domain service's HTTP app starts with: the shared app (envelopes,
// request ids, errors), the gateway's credential on every route but the public
// ones, Idempotency-Key on POSTs, /health over the service's database, and the
// process's metrics at /metrics (a service's port is internal: reachable by the
// gateway and the deployment's Prometheus only).
import type { FastifyInstance } from 'fastify';
import type { Db } from 'mongodb';
import { createHttpApp, type HttpAppOptions } from './app.ts';
import { requireGateway } from './gateway-auth.ts';
import { idempotentPosts, type Sealer } from './idempotency.ts';
import { healthRoute } from './health.ts';
import { metricsRoute } from './request-metrics.ts';
import { documentOperations, publishedTag, type ServiceDocs } from './operation-docs.ts';

export interface ServiceAppOptions {
  name: string;
  /** Its public operations' documentation (contract/*-operations.ts), published at /openapi.json; the gateway refuses an operation without. */
  docs?: ServiceDocs;
  db: Db;
  internalToken: string;
  /** Seals the answers kept for Idempotency-Key replays (a service whose answers carry secrets). */
  idempotencySealer?: Sealer;
  logger?: HttpAppOptions['logger'];
  loggerInstance?: HttpAppOptions['loggerInstance'];
}

export function createServiceApp(opts: ServiceAppOptions): FastifyInstance {
  const app = createHttpApp({
    name: opts.name,
    logger: opts.logger,
    loggerInstance: opts.loggerInstance,
    tags: opts.docs?.tags.map(publishedTag),
  });
  documentOperations(app, opts.docs?.operations ?? {});
  requireGateway(app, opts.internalToken);
  idempotentPosts(app, opts.db, opts.idempotencySealer);
  healthRoute(app, async () => {
    await opts.db.command({ ping: 1 });
  });
  metricsRoute(app);
  return app;
}
