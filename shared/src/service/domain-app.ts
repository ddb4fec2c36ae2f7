// A domain service's HTTP app: the shared service app (http/service-app.ts) and the
// service's route sets, registered in one plugin (the OpenAPI document covers the
// routes registered in plugins). No listening here (server.ts does that), so tests
// build the app with their own store and neighbours.
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import { createServiceApp, type ServiceAppOptions } from '../http/service-app.ts';
import type { ServiceDocs } from '../http/operation-docs.ts';
import type { SchemaTypes } from '../http/schemas.ts';
import type { ServiceRuntime } from './runner.ts';

/** What a service's app builder takes besides its own objects (its name and docs are its own). */
export type DomainAppOptions = Omit<ServiceAppOptions, 'name' | 'docs'>;

/** What a running service's app is built with from its runtime: its database, the gateway's credential, its logger. */
export const appRuntimeOptions = ({ db, config, logger }: ServiceRuntime) =>
  ({ db, internalToken: config.internalToken, loggerInstance: logger }) satisfies DomainAppOptions;

/** Where a route set registers its routes: handlers see requests typed by the route's schemas. */
export type ServiceRoutes = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  SchemaTypes
>;

/** Registers some of a service's routes over the objects its app is built with. */
export type RouteSet<O> = (app: ServiceRoutes, opts: O) => void;

/** The app of the service `name`, documented by `docs`, with `routes` registered in this order. */
export function buildServiceApp<O extends DomainAppOptions>(
  name: string,
  docs: ServiceDocs,
  opts: O,
  routes: RouteSet<NoInfer<O>>[],
): FastifyInstance {
  const app = createServiceApp({ ...opts, name, docs });
  app.register(async (scope) => {
    const typed = scope.withTypeProvider<SchemaTypes>();
    for (const register of routes) register(typed, opts);
  });
  return app;
}
