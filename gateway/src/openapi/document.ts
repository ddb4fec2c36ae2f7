// The one OpenAPI 3.1 document of the API, built from the paths that
// @fastify/swagger writes from the route schemas (the services' and the gateway's
// own): schemas with a `title` become named components, each operation gets its
// id, summary, description and examples (published by the service that answers it,
// from its contract/*-operations.ts), its scope, headers and every error it answers
// with its exact message, and the webhooks section describes each event and how to
// verify its signature.
import type { ErrorMessages, PublishedTag } from '@lpm/shared/http/operation-docs';
import { errorResponses } from '@lpm/shared/http/schemas';
import { PARAMETER_DOCS } from './parameters.ts';
import { errorResponse } from './error-responses.ts';
import type { Json } from './refs.ts';
import { firstRequired, hoist } from './schema-components.ts';
import { EVENTS_TAG, webhookSection } from './webhook-section.ts';

/** A request or response body of an operation @fastify/swagger wrote. */
interface Media {
  schema: unknown;
  examples?: Json;
}

/** A parameter of an operation @fastify/swagger wrote. */
interface Parameter extends Json {
  in: string;
  name: string;
  schema?: unknown;
  example?: unknown;
}

/** An operation's documentation as its service publishes it (shared/src/http/operation-docs.ts). */
interface OperationDoc {
  operationId: string;
  summary: string;
  description: string;
  'x-examples'?: Json;
  'x-errors'?: ErrorMessages;
}

/** An operation as @fastify/swagger writes it, with the fields the builder reads. */
export interface RawOperation extends Partial<OperationDoc> {
  parameters?: Parameter[];
  requestBody?: { content: { 'application/json': Media } };
  responses: Record<string, { content?: { 'application/json'?: Media } }>;
}

export type Paths = Record<string, Record<string, RawOperation>>;

/** What the builder reads of a service's published document. */
export interface ServiceDocument {
  paths: Paths;
  tags: PublishedTag[];
}

export type Scope = 'read' | 'write' | 'admin';

const COMMON_ERRORS: Record<number, string[]> = {
  401: ['Missing API key', 'Invalid API key'],
  403: ['Insufficient permissions'],
  429: ['Rate limit exceeded', 'Too many failed authentications'],
  500: ['Internal server error'],
  503: ['Service unavailable'],
};

const HEADERS = {
  'X-Request-Id': {
    description:
      'The request id: the one the client sent (1 to 200 of `A-Za-z0-9_.:-`), or one generated. Quote it when reporting a problem.',
    schema: { type: 'string' },
  },
  'RateLimit-Limit': {
    description:
      "Requests allowed in the team's current minute window (by plan: Starter 60, Professional 300, Enterprise 1000).",
    schema: { type: 'integer' },
  },
  'RateLimit-Remaining': { description: 'Requests left in the current minute window.', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the minute window resets.', schema: { type: 'integer' } },
  'Retry-After': { description: 'Seconds to wait before retrying (429).', schema: { type: 'integer' } },
  'Idempotent-Replayed': {
    description: '`true` when this is the stored answer to an earlier POST with the same Idempotency-Key.',
    schema: { type: 'string', enum: ['true'] },
  },
};
const headerRef = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });

const DESCRIPTION = `A JSON API for law offices: cases, clients, a deals pipeline, activities and deadlines, finances, and signed webhooks.

**Authentication.** Every request sends \`Authorization: Bearer lpk_...\` (an API key issued by an operator) and \`Content-Type: application/json\`. A key has scopes: \`read\` for GET, \`write\` for POST, PUT and DELETE, \`admin\` for webhooks and team settings; each operation names the scope it needs.

**Envelopes.** Success: \`{ "success": true, "data": ... }\`; lists add \`pagination\` (page, limit, total, pages). Errors: \`{ "success": false, "error": { "code", "message", "details" } }\` with the status and exact message of each condition listed on the operation. Create responses give links as flat ids (\`client_id\`); reads give nested objects; PUT returns only \`id\`, the fields sent and \`updated_at\`.

**Conventions.** Ids carry a kind prefix and a lower-case ULID (\`case_01jd3k...\`). Dates are \`YYYY-MM-DD\`; timestamps are UTC with milliseconds and \`Z\`. Amounts keep at most 2 decimals. A field with no value is \`null\`.

**Limits.** Per team and plan, a minute and a day window (Starter 60/min and 1,000/day, Professional 300 and 10,000, Enterprise 1,000/min): every response carries \`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\`; a 429 adds \`Retry-After\`. Bodies up to 1 MiB.

**Idempotency.** A POST with \`Idempotency-Key\` repeated within 24 h returns the first answer byte for byte, with \`Idempotent-Replayed: true\`.

**Webhooks.** See the webhooks section: every event's payload, its headers and how to verify the signature.

**Webhooks portal.** \`POST /v1/webhooks/portal-sessions\` answers a link to \`/portal\`, a page this gateway serves where the team's admin manages endpoints, deliveries, secrets and test events in a browser; the link's token (\`lpp_...\`) is good for the \`/v1/webhooks\` routes only, until it expires or is revoked.`;

function scopeText(scope: Scope): string {
  return `**Scope:** \`${scope}\`.`;
}

/** What every POST may also answer: Idempotency-Key replays (decisions §9). */
const IDEMPOTENCY_ERRORS = {
  409: ['A request with this Idempotency-Key is in progress'],
  422: ['Idempotency key reused with different request'],
};

interface BuildInput {
  /** The paths @fastify/swagger wrote for the services' and the gateway's /v1 routes. */
  paths: Paths;
  /** The tags of those paths, each over a path prefix, in the document's order. */
  tags: PublishedTag[];
  /** The scope each operation needs ("GET /v1/deals" -> read). */
  scopeOf: (method: string, path: string) => Scope;
}

/** Each documented operation of `paths` under its tag; throws naming the operations without documentation. */
function documentedPaths({ paths, tags, scopeOf }: BuildInput, schemas: Json): Record<string, Record<string, Json>> {
  const outPaths: Record<string, Record<string, Json>> = {};
  const missing: string[] = [];
  const kinds = idKinds(tags);
  for (const path of Object.keys(paths).sort()) {
    for (const [method, raw] of Object.entries(paths[path])) {
      const key = `${method.toUpperCase()} ${path}`;
      const doc = raw.operationId ? (raw as OperationDoc) : undefined;
      if (!doc) {
        missing.push(key);
        continue;
      }
      // The longest prefix: the gateway's portal sessions have a tag of their own under the webhooks service's.
      const tag = tags
        .filter((t) => path === t['x-prefix'] || path.startsWith(`${t['x-prefix']}/`))
        .reduce<PublishedTag | undefined>(
          (best, t) => (best && best['x-prefix'].length >= t['x-prefix'].length ? best : t),
          undefined,
        );
      if (!tag) throw new Error(`${key}: no tag's prefix covers it`);
      (outPaths[path] ??= {})[method] = operation(
        method,
        path,
        raw,
        doc,
        { scope: scopeOf(method.toUpperCase(), path), tag, idKinds: kinds },
        schemas,
      );
    }
  }
  if (missing.length)
    throw new Error(
      `operations without documentation (their service's contract/*-operations.ts): ${missing.join(', ')}`,
    );

  return outPaths;
}

/** The shared parts the operations refer to: security, schemas, headers, responses, parameters. */
function components(schemas: Json): Json {
  const limitHeaders = {
    'X-Request-Id': headerRef('X-Request-Id'),
    'RateLimit-Limit': headerRef('RateLimit-Limit'),
    'RateLimit-Remaining': headerRef('RateLimit-Remaining'),
    'RateLimit-Reset': headerRef('RateLimit-Reset'),
  };
  const requestId = { 'X-Request-Id': headerRef('X-Request-Id') };
  return {
    securitySchemes: {
      apiKey: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'lpk_ + 40 base62 characters',
        description:
          'An API key in `Authorization: Bearer lpk_...`. Its scopes (read, write, admin) are named on each operation.',
      },
    },
    schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))),
    headers: HEADERS,
    responses: {
      Unauthorized: errorResponse(401, COMMON_ERRORS[401], requestId),
      Forbidden: errorResponse(403, COMMON_ERRORS[403], limitHeaders),
      PayloadTooLarge: errorResponse(413, ['Request body exceeds 1 MiB'], limitHeaders),
      RateLimited: errorResponse(429, COMMON_ERRORS[429], {
        ...limitHeaders,
        'Retry-After': headerRef('Retry-After'),
      }),
      InternalError: errorResponse(500, COMMON_ERRORS[500], requestId),
      ServiceUnavailable: errorResponse(503, COMMON_ERRORS[503], requestId),
    },
    parameters: {
      IdempotencyKey: {
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description:
          'Any 1 to 255 characters. The same key repeated within 24 h returns the first answer, byte for byte, with `Idempotent-Replayed: true`; with a different body it is 422 `Idempotency key reused with different request`.',
        schema: { type: 'string', minLength: 1, maxLength: 255 },
        example: '0b7c4e5a-1f2d-4c3b-9a8e-6d5f4c3b2a19',
      },
      RequestId: {
        name: 'X-Request-Id',
        in: 'header',
        required: false,
        description:
          'A request id of your own (1 to 200 of `A-Za-z0-9_.:-`), echoed in the response and the logs; one is generated otherwise.',
        schema: { type: 'string', pattern: '^[\\w.:-]{1,200}$' },
        example: 'req-2026-11-27-0001',
      },
    },
  };
}

export function buildDocument(input: BuildInput): Json {
  const schemas: Json = {};
  const outPaths = documentedPaths(input, schemas);
  hoist(errorResponses['4xx'], schemas, true);
  const webhooks = webhookSection(schemas);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Legal practice management API',
      version: 'v1',
      summary: 'Cases, clients, deals, activities, finances and signed webhooks for law offices.',
      description: DESCRIPTION,
      contact: { name: 'API support', email: 'api@lpm.example.com', url: 'https://lpm.example.com/support' },
      license: { name: 'Proprietary', url: 'https://lpm.example.com/terms' },
    },
    servers: [
      {
        url: '{base_url}',
        description: "The gateway's address; `npm start` prints it.",
        variables: {
          base_url: { default: 'http://127.0.0.1:8080', description: 'Scheme, host and port of the gateway.' },
        },
      },
    ],
    security: [{ apiKey: [] }],
    tags: [...input.tags.map(({ name, description }) => ({ name, description })), EVENTS_TAG],
    paths: outPaths,
    webhooks,
    components: components(schemas),
  };
}

/** The kind prefixes of the record ids the tags give examples of ("deal_, cli_, ..."). */
const idKinds = (tags: PublishedTag[]) =>
  tags
    .flatMap((t) => (t['x-id-example'] ? [t['x-id-example'].slice(0, t['x-id-example'].indexOf('_') + 1)] : []))
    .join(', ');

interface OperationContext {
  scope: Scope;
  tag: PublishedTag;
  idKinds: string;
}

/** The operation's request body (on `out`), its examples where the service or the docs give them; its schema, hoisted. */
function requestBodyOf(
  body: NonNullable<RawOperation['requestBody']>,
  doc: OperationDoc,
  schemas: Json,
  out: Json,
): Json {
  const media = body.content['application/json'];
  const { examples: schemaExamples, ...schema } = media.schema as Json;
  const bodySchema = hoist(schema, schemas) as Json;
  // @fastify/swagger moves a body schema's `examples` to the media type; the gateway's own routes keep them in the schema.
  const examples =
    doc['x-examples'] ??
    media.examples ??
    (Array.isArray(schemaExamples)
      ? Object.fromEntries(schemaExamples.map((value: unknown, i) => [`example${i + 1}`, { value }]))
      : undefined);
  out.requestBody = {
    required: true,
    content: { 'application/json': { schema: bodySchema, ...(examples ? { examples } : {}) } },
  };
  return bodySchema;
}

function operation(
  method: string,
  path: string,
  raw: RawOperation,
  doc: OperationDoc,
  { scope, tag, idKinds }: OperationContext,
  schemas: Json,
): Json {
  const idDocs = { description: `The record's id, with its kind prefix (${idKinds}).`, example: tag['x-id-example'] };
  const parameters: Json[] = (raw.parameters ?? []).map((p) => {
    const docs = p.in === 'path' && p.name === 'id' ? idDocs : PARAMETER_DOCS[p.name];
    return {
      ...p,
      schema: hoist(p.schema, schemas),
      ...(docs
        ? {
            description: docs.description,
            ...(docs.example !== undefined && !p.example ? { example: docs.example } : {}),
          }
        : {}),
    };
  });
  parameters.push({ $ref: '#/components/parameters/RequestId' });
  const isPost = method === 'post';
  if (isPost) parameters.push({ $ref: '#/components/parameters/IdempotencyKey' });

  const out: Json = {
    operationId: doc.operationId,
    summary: doc.summary,
    description: `${doc.description}\n\n${scopeText(scope)}`,
    tags: [tag.name],
    parameters,
  };

  const bodySchema = raw.requestBody ? requestBodyOf(raw.requestBody, doc, schemas, out) : undefined;

  const limitHeaders = {
    'X-Request-Id': headerRef('X-Request-Id'),
    'RateLimit-Limit': headerRef('RateLimit-Limit'),
    'RateLimit-Remaining': headerRef('RateLimit-Remaining'),
    'RateLimit-Reset': headerRef('RateLimit-Reset'),
  };
  const responses: Json = {};
  for (const [status, response] of Object.entries(raw.responses)) {
    if (!/^2\d\d$/.test(status)) continue;
    // Every 2xx answer of the API is JSON.
    const content = response.content?.['application/json'] as Media;
    responses[status] = {
      description: status === '201' ? 'Created.' : 'OK.',
      headers: { ...limitHeaders, ...(isPost ? { 'Idempotent-Replayed': headerRef('Idempotent-Replayed') } : {}) },
      content: { 'application/json': { schema: hoist(content.schema, schemas, true) } },
    };
  }

  const own = doc['x-errors'] ?? {};
  const field = firstRequired(bodySchema, schemas);
  const inQuery = (name: string) => parameters.some((p) => p.in === 'query' && p.name === name);
  const bad = [
    ...(own[400] ?? []),
    ...(raw.requestBody ? ['Invalid JSON body', ...(field ? [`${field} is required`] : []), 'Unknown field: foo'] : []),
    ...(inQuery('page') ? ['page must be an integer >= 1'] : []),
    ...(inQuery('limit') ? ['limit must be an integer from 1 to 100'] : []),
    'Invalid URL encoding',
  ];
  responses['400'] = errorResponse(400, bad, { 'X-Request-Id': headerRef('X-Request-Id') });
  const shared = (name: string) => ({ $ref: `#/components/responses/${name}` });
  responses['401'] = shared('Unauthorized');
  responses['403'] = shared('Forbidden');
  for (const status of [404, 409, 422] as const) {
    const messages = [...(own[status] ?? []), ...(isPost && status !== 404 ? IDEMPOTENCY_ERRORS[status] : [])];
    if (messages.length) responses[status] = errorResponse(status, messages, limitHeaders);
  }
  if (raw.requestBody) responses['413'] = shared('PayloadTooLarge');
  responses['429'] = shared('RateLimited');
  responses['500'] = shared('InternalError');
  responses['503'] = shared('ServiceUnavailable');
  out.responses = responses;
  return out;
}
