// GET /v1/openapi.json and /v1/openapi.yaml: one OpenAPI 3.1 document for the whole
// API (openapi/document.ts), built from the paths the deployed services publish at
// their /openapi.json and the gateway's own /v1 routes that declare a schema
// (registered after this), and rebuilt only when a service's document changes
// (openapi/served-document.ts). `npm run openapi` writes the same document to
// openapi/openapi.json.
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { replicaUrls, SERVICE_NAMES, type ServiceName } from '@lpm/shared/service/names';
import { PROXIED_PREFIXES } from '@lpm/shared/service/registry';
import type { Upstreams } from '../config.ts';
import { documentedSchema, publishedTag } from '@lpm/shared/http/operation-docs';
import { SETTINGS_OPERATIONS, SETTINGS_TAG } from '../contract/settings-operations.ts';
import { PORTAL_OPERATIONS, PORTAL_TAG } from '../contract/portal-operations.ts';

/** The documentation of the gateway's own operations. */
const GATEWAY_OPERATIONS = { ...SETTINGS_OPERATIONS, ...PORTAL_OPERATIONS };
import { buildDocument, type Paths, type RawOperation, type Scope, type ServiceDocument } from '../openapi/document.ts';
import { ServedDocument, type EncodedBody } from '../openapi/served-document.ts';

export interface OpenApiOptions {
  upstreams: Upstreams;
  deployed: readonly ServiceName[];
  timeoutMs: number;
  /** How often the services' documents are read again for a change, at most (default 5 s). */
  refreshMs?: number;
}

type Schema = Record<string, unknown>;

/** A route's operation in the form @fastify/swagger (OpenAPI 3.1) gives the services' routes, with its documentation. */
function operation(schema: { body?: Schema; params?: Schema; response?: Record<string, Schema> }) {
  const json = (s: Schema) => ({ content: { 'application/json': { schema: s } } });
  const { operationId, summary, description, 'x-examples': examples, 'x-errors': errors } = schema as RawOperation;
  const params = Object.entries((schema.params?.properties ?? {}) as Record<string, Schema>);
  return {
    operationId,
    ...(params.length
      ? {
          parameters: params.map(([name, s]) => ({
            name,
            in: 'path',
            required: true,
            schema: s,
            ...(Array.isArray(s.examples) ? { example: s.examples[0] as unknown } : {}),
          })),
        }
      : {}),
    summary,
    description,
    'x-examples': examples,
    'x-errors': errors,
    ...(schema.body ? { requestBody: { required: true, ...json(schema.body) } } : {}),
    responses: Object.fromEntries(
      Object.entries(schema.response ?? {}).map(([status, s]) => [
        status.toUpperCase(),
        { description: 'Default Response', ...json(s) },
      ]),
    ),
  };
}

/** The scope a proxied operation needs (access.ts decides the same way). */
function proxiedScope(method: string, path: string): Scope {
  const route = PROXIED_PREFIXES.find((r) => path === r.prefix || path.startsWith(`${r.prefix}/`));
  if (route?.adminOnly) return 'admin';
  if (route?.readOnly || method === 'GET') return 'read';
  return 'write';
}

/** Collects the gateway's own documented /v1 routes as they are registered; call before them. */
export function gatewayOperations(app: FastifyInstance): { paths: Paths; scopes: Map<string, Scope> } {
  const paths: Paths = {};
  const scopes = new Map<string, Scope>();
  app.addHook('onRoute', (route: RouteOptions) => {
    if (!route.url.startsWith('/v1/') || !route.schema || typeof route.method !== 'string' || route.method === 'HEAD')
      return;
    const path = route.url.replace(/:(\w+)/g, '{$1}');
    (paths[path] ??= {})[route.method.toLowerCase()] = operation(documentedSchema(route, GATEWAY_OPERATIONS) as never);
    const config = route.config;
    scopes.set(
      `${route.method} ${path}`,
      config?.adminOnly ? 'admin' : config?.readOnly || route.method === 'GET' ? 'read' : 'write',
    );
  });
  return { paths, scopes };
}

/** The document over the services' documents (their paths and tags) and the gateway's own routes. */
export function apiDocument(services: ServiceDocument[], own: ReturnType<typeof gatewayOperations>) {
  const paths: Paths = {};
  for (const s of services) Object.assign(paths, s.paths);
  Object.assign(paths, own.paths);
  const tags = [...services.flatMap((s) => s.tags), publishedTag(SETTINGS_TAG), publishedTag(PORTAL_TAG)];
  return buildDocument({
    paths,
    tags,
    scopeOf: (method, path) => own.scopes.get(`${method} ${path}`) ?? proxiedScope(method, path),
  });
}

export function openApiRoute(app: FastifyInstance, opts: OpenApiOptions): void {
  const own = gatewayOperations(app);

  /** From the first of the service's replicas that answers. */
  const read = async (name: ServiceName): Promise<string | null> => {
    for (const base of replicaUrls(opts.upstreams[name])) {
      try {
        const res = await fetch(new URL('/openapi.json', base), { signal: AbortSignal.timeout(opts.timeoutMs) });
        if (res.ok) return await res.text();
        await res.body?.cancel();
      } catch {
        // the next replica
      }
    }
    return null;
  };

  const served = new ServedDocument({
    // In the registry's order, whatever GATEWAY_SERVICES' order: the document's tags follow it.
    sources: SERVICE_NAMES.filter((name) => opts.deployed.includes(name)).map((name) => ({
      name,
      read: () => read(name),
    })),
    build: (documents) => apiDocument(documents, own),
    refreshMs: opts.refreshMs ?? 5000,
    logger: app.log,
  });

  const send = (req: FastifyRequest, reply: FastifyReply, type: string, encoded: EncodedBody) => {
    const { coding, body } = encoded.for(req.raw);
    if (coding !== 'identity') reply.header('content-encoding', coding);
    return reply.header('vary', 'accept-encoding').type(type).send(body);
  };
  app.get('/v1/openapi.json', { config: { public: true }, logLevel: 'warn' }, async (req, reply) =>
    send(req, reply, 'application/json; charset=utf-8', (await served.current()).json),
  );
  app.get('/v1/openapi.yaml', { config: { public: true }, logLevel: 'warn' }, async (req, reply) =>
    send(req, reply, 'application/yaml; charset=utf-8', (await served.current()).yaml),
  );
}
