import type { FastifyInstance } from 'fastify';
import { buildServiceApp, type DomainAppOptions } from '@lpm/shared/service/domain-app';
import { PUBLICATION_DOCS } from './contract/publication-operations.ts';
import type { Publications } from './domain/publications.ts';
import { publicationRoutes, type SyncTrigger } from './routes/publications.ts';

export interface PublicationsAppOptions extends DomainAppOptions {
  publications: Publications;
  sync: SyncTrigger;
}

export function buildPublicationsApp(opts: PublicationsAppOptions): FastifyInstance {
  return buildServiceApp('publications', PUBLICATION_DOCS, opts, [publicationRoutes]);
}
