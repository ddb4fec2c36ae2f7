// The routes every collection of a team's records has: GET base, a page of the list;
// POST base, a create answered 201; GET, PUT and DELETE of base/:id. Each is validated
// by its contract schema and answered in the envelope; the domain object does the work
// under the names every service gives those methods, but for the DELETE, which each
// service names for what it does (an archive, a cancel). The read and the update are
// also registered alone, for a resource that has them without the rest.
import type { FastifyRequest } from 'fastify';
import { ok, page } from '../http/envelope.ts';
import { idParams } from '../http/common-schemas.ts';
import { pagination, type ListQuery } from '../http/pagination.ts';
import type { Schema } from '../http/schemas.ts';
import type { Identity } from '../identity.ts';
import type { ServiceRoutes } from './domain-app.ts';

/** A page of a list as a domain object answers it: the page's items and how many match in all. */
export interface Listed {
  items: unknown[];
  total: number;
}

/** The page envelope of `listed`, the page the list query `q` asked for. */
export const pageOf = (q: ListQuery, listed: Listed) => page(listed.items, pagination(q, listed.total));

/** A domain object that reads one record, as far as its GET base/:id calls it. */
export interface RecordReader {
  get: (who: Identity, id: string) => Promise<unknown>;
}

/** A domain object that changes one record, as far as its PUT base/:id calls it. */
export interface RecordUpdater<U> {
  update: (who: Identity, id: string, body: U) => Promise<unknown>;
}

/** A collection's domain object, as far as its routes call it. */
export interface RecordCollection<Q, C, U> extends RecordReader, RecordUpdater<U> {
  list: (who: Identity, q: Q) => Promise<Listed>;
  create: (who: Identity, body: C) => Promise<unknown>;
}

/** What a collection's contract says of its five routes (contract/*-schemas.ts). */
export interface RecordContract<Q, C, U> {
  /** The list's query string, the create's body, the update's body. */
  schemas: { list: Schema<Q>; create: Schema<C>; update: Schema<U> };
  /** The answers of the list (a page), the create (201), the read, the update and the DELETE (an archive, a cancel). */
  responses: { list: unknown; created: unknown; detail: unknown; updated: unknown; removed: unknown };
  /** Before the POST's Idempotency-Key is taken (a check of its headers). */
  onCreate?: (req: FastifyRequest) => Promise<void>;
}

/**
 * What Fastify validated against `schema`, as the type the schema accepts. The type
 * provider types a route whose schema is known; here the schemas are type parameters,
 * whose Static types TypeScript cannot reduce.
 */
const valid = <T>(_schema: Schema<T>, value: unknown) => value as T;

/** GET `one` (a path ending in /:id): the record, answered as `response`. */
export function recordReadRoute(app: ServiceRoutes, one: string, records: RecordReader, response: unknown) {
  app.get(one, { schema: { params: idParams, response } }, async (req) =>
    ok(await records.get(req.identity, req.params.id)),
  );
}

/** PUT `one` (a path ending in /:id): the fields of `body` changed, answered as `response`. */
export function recordUpdateRoute<U>(
  app: ServiceRoutes,
  one: string,
  records: RecordUpdater<NoInfer<U>>,
  body: Schema<U>,
  response: unknown,
) {
  app.put(one, { schema: { params: idParams, body, response } }, async (req) =>
    ok(await records.update(req.identity, req.params.id, valid(body, req.body))),
  );
}

/**
 * Registers the five routes of the collection at `base`, each path's methods in the
 * order the document lists them; the DELETE runs `remove`, which each service names
 * for what it does (an archive, a cancel).
 */
export function recordRoutes<Q extends ListQuery, C, U>(
  app: ServiceRoutes,
  base: string,
  records: RecordCollection<NoInfer<Q>, NoInfer<C>, NoInfer<U>>,
  { schemas, responses, onCreate }: RecordContract<Q, C, U>,
  remove: (who: Identity, id: string) => Promise<unknown>,
): void {
  const one = `${base}/:id`;

  app.get(base, { schema: { querystring: schemas.list, response: responses.list } }, async (req) => {
    const q = valid(schemas.list, req.query);
    return pageOf(q, await records.list(req.identity, q));
  });

  const createSchema = { body: schemas.create, response: responses.created };
  app.post(base, { ...(onCreate && { onRequest: onCreate }), schema: createSchema }, async (req, reply) => {
    reply.status(201);
    return ok(await records.create(req.identity, valid(schemas.create, req.body)));
  });

  recordReadRoute(app, one, records, responses.detail);
  recordUpdateRoute(app, one, records, schemas.update, responses.updated);

  app.delete(one, { schema: { params: idParams, response: responses.removed } }, async (req) =>
    ok(await remove(req.identity, req.params.id)),
  );
}
