// The routes every collection of a team's records has: GET base, a page of the list;
// POST base, a create answered 201; GET, PUT and DELETE of base/:id. Each is validated
// by its contract schema and answered in the envelope; the domain object does the work
// under the names every service gives those methods, but for the DELETE, which each
// service names for what it does (an archive, a cancel).
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

/** A collection's domain object, as far as its routes call it. */
export interface RecordCollection<Q, C, U> {
  list: (who: Identity, q: Q) => Promise<Listed>;
  create: (who: Identity, body: C) => Promise<unknown>;
  get: (who: Identity, id: string) => Promise<unknown>;
  update: (who: Identity, id: string, body: U) => Promise<unknown>;
}

export interface RecordContract<Q, C, U> {
  /** The list's query string, the create's body, the update's body. */
  schemas: { list: Schema<Q>; create: Schema<C>; update: Schema<U> };
  /** The contract's answers of the list (a page), the create (201), the read and the update. */
  responses: { list: unknown; created: unknown; detail: unknown; updated: unknown };
  /** The DELETE: what it answers, and what the domain does (an archive, a cancel). */
  remove: { response: unknown; run: (who: Identity, id: string) => Promise<unknown> };
  /** Before the POST's Idempotency-Key is taken (a check of its headers). */
  onCreate?: (req: FastifyRequest) => Promise<void>;
}

/**
 * What Fastify validated against `schema`, as the type the schema accepts. The type
 * provider types a route whose schema is known; here the schemas are type parameters,
 * whose Static types TypeScript cannot reduce.
 */
const valid = <T>(_schema: Schema<T>, value: unknown) => value as T;

/** Registers the five routes of the collection at `base`, each path's methods in the order the document lists them. */
export function recordRoutes<Q extends ListQuery, C, U>(
  app: ServiceRoutes,
  base: string,
  records: RecordCollection<NoInfer<Q>, NoInfer<C>, NoInfer<U>>,
  { schemas, responses, remove, onCreate }: RecordContract<Q, C, U>,
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

  app.get(one, { schema: { params: idParams, response: responses.detail } }, async (req) =>
    ok(await records.get(req.identity, req.params.id)),
  );

  const updateSchema = { params: idParams, body: schemas.update, response: responses.updated };
  app.put(one, { schema: updateSchema }, async (req) =>
    ok(await records.update(req.identity, req.params.id, valid(schemas.update, req.body))),
  );

  app.delete(one, { schema: { params: idParams, response: remove.response } }, async (req) =>
    ok(await remove.run(req.identity, req.params.id)),
  );
}
