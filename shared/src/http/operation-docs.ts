// What a route's schema cannot say about a public operation, kept beside the
// contract of the service that answers it (contract/*-operations.ts): its stable
// operationId, a summary, the rules as a description, named request examples, and
// the errors its own rules answer with, given as the contract's error constructors
// (contract/*-errors.ts) or as the request field whose schema message it is. Each
// route carries its documentation in its schema, so the service's /openapi.json
// publishes it (`x-examples`, `x-errors`) and the gateway's document builder reads
// it from there.
import type { FastifyInstance, RouteOptions } from 'fastify';
import type { AppError } from '../errors.ts';

/** The 400 a request field's schema answers with (its `x-message`), looked up in the route's schema. */
export interface SchemaMessage {
  field: string;
}

export const schemaMessage = (field: string): SchemaMessage => ({ field });

/** Sentences several operations' descriptions share. */
export const ID_RULE = 'Ids carry their kind prefix; an id of another kind, or of another team, is 404.';
export const PUT_RULE =
  'Takes any subset of the create fields; only those sent change. The response holds `id`, each field sent (normalized) and `updated_at`. An empty body is 400 `No fields to update`; a read-only field is 400 `Unknown field`. `null` unlinks a link.';
export const LIST_RULE =
  'Paginated: `page` (from 1), `limit` (1 to 100, default 20), `sort` (one field, `-` for descending; ties break by id). A page past the end gives `data: []` with the true `total`.';

export interface OperationDoc {
  operationId: string;
  summary: string;
  description: string;
  /** Named request body examples. */
  examples?: Record<string, { summary: string; value: unknown }>;
  /** The conditions this operation's own rules answer with, beyond those every operation shares; in the order shown. */
  errors?: readonly (AppError | SchemaMessage)[];
}

/** Keyed by "METHOD /path" as the OpenAPI document writes paths ("GET /v1/deals/{id}"). */
export type OperationDocs = Readonly<Record<string, OperationDoc>>;

/** The operations under one path prefix, as the document groups them. */
export interface OperationTag {
  name: string;
  prefix: string;
  description: string;
  /** A record id of the kind its operations' {id} takes. */
  idExample?: string;
}

/** What a service documents of its operations. */
export interface ServiceDocs {
  tags: readonly OperationTag[];
  operations: OperationDocs;
}

/** A tag as a published document carries it: an OpenAPI tag, the prefix and id example as extensions. */
export interface PublishedTag {
  name: string;
  description: string;
  'x-prefix': string;
  'x-id-example'?: string;
}

export const publishedTag = (t: OperationTag): PublishedTag => ({
  name: t.name,
  description: t.description,
  'x-prefix': t.prefix,
  ...(t.idExample ? { 'x-id-example': t.idExample } : {}),
});

/** Status -> messages: the form an operation's `x-errors` takes in the published document. */
export type ErrorMessages = Partial<Record<number, string[]>>;

const openApiPath = (url: string) => url.replace(/:(\w+)/g, '{$1}');

/** The `x-message` of the first property named `field` anywhere in `schema`. */
function messageOf(schema: unknown, field: string): string | undefined {
  if (schema === null || typeof schema !== 'object') return undefined;
  const properties = (schema as { properties?: Record<string, { 'x-message'?: unknown }> }).properties;
  const own = properties?.[field]?.['x-message'];
  if (typeof own === 'string') return own;
  for (const value of Object.values(schema)) {
    const found = messageOf(value, field);
    if (found) return found;
  }
  return undefined;
}

function errorMessages(key: string, errors: OperationDoc['errors'], schema: Record<string, unknown>): ErrorMessages {
  const out: ErrorMessages = {};
  for (const error of errors ?? []) {
    if ('status' in error) {
      (out[error.status] ??= []).push(error.message);
      continue;
    }
    const message = messageOf([schema.body, schema.querystring, schema.params], error.field);
    if (!message) throw new Error(`${key}: no schema message for ${error.field}`);
    (out[400] ??= []).push(message);
  }
  return out;
}

/** The route's schema with its operation's documentation, when `docs` has it. */
export function documentedSchema(
  route: Pick<RouteOptions, 'method' | 'url' | 'schema'>,
  docs: OperationDocs,
): RouteOptions['schema'] {
  if (typeof route.method !== 'string') return route.schema;
  const key = `${route.method} ${openApiPath(route.url)}`;
  const doc = docs[key];
  if (!doc) return route.schema;
  const schema = { ...route.schema } as Record<string, unknown>;
  return {
    ...schema,
    operationId: doc.operationId,
    summary: doc.summary,
    description: doc.description,
    ...(doc.examples ? { 'x-examples': doc.examples } : {}),
    'x-errors': errorMessages(key, doc.errors, schema),
  } as RouteOptions['schema'];
}

/** Documents each route of `app` registered after this that `docs` describes. */
export function documentOperations(app: FastifyInstance, docs: OperationDocs): void {
  app.addHook('onRoute', (route) => {
    route.schema = documentedSchema(route, docs);
  });
}
