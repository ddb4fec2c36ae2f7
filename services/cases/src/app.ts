// The cases service as an app: no listening here (server.ts does that), so tests build it with its real stores.
import type { FastifyInstance } from 'fastify';
import { createHttpApp, type HttpAppOptions } from '@lpm/shared/http';
import { requireGateway } from '@lpm/shared/service-auth';
import { healthRoute } from '@lpm/shared/health';
import { idempotentPosts } from '@lpm/shared/idempotency';
import { Cases, type CasesDeps } from './domain/cases.ts';
import { caseRoutes } from './routes/cases.ts';
import { internalRoutes } from './routes/internal.ts';

export interface CasesAppOptions {
  cases: Cases;
  orm: CasesDeps['orm'];
  internalToken: string;
  logger?: HttpAppOptions['logger'];
  loggerInstance?: HttpAppOptions['loggerInstance'];
}

export function buildCasesApp(opts: CasesAppOptions): FastifyInstance {
  const app = createHttpApp({ name: 'cases', logger: opts.logger, loggerInstance: opts.loggerInstance });
  const db = opts.orm.em.getConnection().getDb();
  requireGateway(app, opts.internalToken);
  idempotentPosts(app, db);
  healthRoute(app, async () => {
    await db.command({ ping: 1 });
  });
  app.register(async (scope) => {
    caseRoutes(scope, opts.cases);
    internalRoutes(scope, opts.cases);
  });
  return app;
}
