// The publications service as an app: no listening here (server.ts does that), so
// tests build it with their own store and neighbours.
import type { FastifyInstance } from 'fastify';
import { createServiceApp, type ServiceAppOptions } from '@lpm/shared/http/service-app';
import { PUBLICATION_DOCS } from './contract/publication-operations.ts';
import type { Publications } from './domain/publications.ts';
import { publicationRoutes, type SyncTrigger } from './routes/publications.ts';

export interface PublicationsAppOptions extends Omit<ServiceAppOptions, 'name' | 'docs'> {
  publications: Publications;
  sync: SyncTrigger;
}

export function buildPublicationsApp(opts: PublicationsAppOptions): FastifyInstance {
  const app = createServiceApp({ ...opts, name: 'publications', docs: PUBLICATION_DOCS });
  app.register(async (scope) => publicationRoutes(scope, opts.publications, opts.sync));
  return app;
}
