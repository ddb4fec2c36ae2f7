import type { FastifyInstance } from 'fastify';
import { buildServiceApp, type DomainAppOptions } from '@lpm/shared/service/domain-app';
import { CLIENT_DOCS } from './contract/client-operations.ts';
import type { Clients } from './domain/clients.ts';
import { clientRoutes } from './routes/clients.ts';
import { internalRoutes } from './routes/internal.ts';

export interface ClientsAppOptions extends DomainAppOptions {
  clients: Clients;
}

export function buildClientsApp(opts: ClientsAppOptions): FastifyInstance {
  return buildServiceApp('clients', CLIENT_DOCS, opts, [clientRoutes, internalRoutes]);
}
