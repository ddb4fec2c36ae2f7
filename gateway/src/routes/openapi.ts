// GET /v1/openapi.json: one OpenAPI document for the whole API, merged from the
// documents the deployed services publish at their /openapi.json and the gateway's
// own /v1 routes that declare a schema (registered after this).
import type { FastifyInstance, RouteOptions } from 'fastify';
import type { ServiceName } from '@lpm/shared/service/names';
import type { Upstreams } from '../config.ts';

export interface OpenApiOptions {
  upstreams: Upstreams;
  deployed: readonly ServiceName[];
  timeoutMs: number;
}

interface ServiceDocument {
  paths?: Record<string, unknown>;
}

type Schema = Record<string, unknown>;

/** A JSON body; its schema's `examples` become the media type's, as @fastify/swagger writes the services' (OpenAPI 3.0 has no `examples` in a schema). */
function json(schema: Schema) {
  const { examples, ...rest } = schema;
  const named = Array.isArray(examples) ? { examples: Object.fromEntries(examples.map((value, i) => [`example${i + 1}`, { value }])) } : {};
  return { content: { 'application/json': { schema: rest, ...named } } };
}

/** A route's OpenAPI operation, in the form @fastify/swagger gives the services' routes. */
function operation(schema: { body?: Schema; response?: Record<string, Schema> }) {
  return {
    ...(schema.body ? { requestBody: { required: true, ...json(schema.body) } } : {}),
    responses: Object.fromEntries(
      Object.entries(schema.response ?? {}).map(([status, s]) => [status.toUpperCase(), { description: 'Default Response', ...json(s) }]),
    ),
  };
}

export function openApiRoute(app: FastifyInstance, opts: OpenApiOptions): void {
  const ownPaths: Record<string, Record<string, unknown>> = {};
  app.addHook('onRoute', (route: RouteOptions) => {
    if (!route.url.startsWith('/v1/') || !route.schema || typeof route.method !== 'string' || route.method === 'HEAD') return;
    (ownPaths[route.url] ??= {})[route.method.toLowerCase()] = operation(route.schema as never);
  });

  const fetchDocument = async (name: ServiceName): Promise<ServiceDocument | null> => {
    try {
      const res = await fetch(new URL('/openapi.json', opts.upstreams[name]), { signal: AbortSignal.timeout(opts.timeoutMs) });
      return res.ok ? ((await res.json()) as ServiceDocument) : null;
    } catch {
      return null;
    }
  };

  app.get('/v1/openapi.json', { config: { public: true }, logLevel: 'warn' }, async () => {
    const documents = await Promise.all(opts.deployed.map(fetchDocument));
    const paths: Record<string, unknown> = {};
    for (const doc of documents) Object.assign(paths, doc?.paths ?? {});
    Object.assign(paths, ownPaths);
    const unavailable = opts.deployed.filter((_, i) => documents[i] === null);
    return {
      openapi: '3.0.3',
      info: { title: 'Legal practice management API', version: 'v1' },
      components: { securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'lpk_ API key' } } },
      security: [{ apiKey: [] }],
      paths,
      ...(unavailable.length ? { 'x-unavailable-services': unavailable } : {}),
    };
  });
}
