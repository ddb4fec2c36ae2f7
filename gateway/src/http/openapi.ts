// GET /v1/openapi.json: one OpenAPI document for the whole API, merged from the
// documents the deployed services publish at their /openapi.json.
import type { FastifyInstance } from 'fastify';
import type { UpstreamName, Upstreams } from './proxy.ts';

export interface OpenApiOptions {
  upstreams: Upstreams;
  deployed: readonly UpstreamName[];
  timeoutMs: number;
}

interface ServiceDocument {
  paths?: Record<string, unknown>;
}

export function openApiRoute(app: FastifyInstance, opts: OpenApiOptions): void {
  const fetchDocument = async (name: UpstreamName): Promise<ServiceDocument | null> => {
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
