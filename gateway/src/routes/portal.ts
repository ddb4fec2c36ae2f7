// GET /portal: the webhooks portal, a page of this gateway's own files (gateway/src/portal/),
// served without a key. The page reads its session's token from the URL's fragment,
// which never reaches a server, and sends it as a bearer credential to /v1/webhooks.
// Its CSP lets it reach nothing but this origin, and lets only the origins of the
// session team's settings (portal.allowed_origins) show it in a frame.
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { PortalSessions } from '../domain/portal-sessions.ts';

const DIR = new URL('../portal/', import.meta.url);

/** The page's files by the name it asks for them, with their types. */
const ASSETS: Record<string, string> = {
  'portal.css': 'text/css; charset=utf-8',
  'api.js': 'text/javascript; charset=utf-8',
  'ui.js': 'text/javascript; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'endpoints.js': 'text/javascript; charset=utf-8',
  'endpoint.js': 'text/javascript; charset=utf-8',
  'deliveries.js': 'text/javascript; charset=utf-8',
  'catalog.js': 'text/javascript; charset=utf-8',
};

const SESSION_RE = /^psn_[0-9a-z]{26}$/;

function csp(frameAncestors: readonly string[]): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${frameAncestors.length ? frameAncestors.join(' ') : "'none'"}`,
  ].join('; ');
}

export function portalRoutes(app: FastifyInstance, sessions: PortalSessions): void {
  const read = (name: string) => readFileSync(new URL(name, DIR));
  const page = read('index.html');
  const files = new Map(Object.keys(ASSETS).map((name) => [name, read(name)]));
  const config = { public: true };

  app.get<{ Querystring: { session?: string } }>('/portal', { config, logLevel: 'warn' }, async (req, reply) => {
    const session = req.query.session;
    const origins =
      typeof session === 'string' && SESSION_RE.test(session) ? await sessions.frameAncestors(session) : [];
    return reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', csp(origins))
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .header('x-content-type-options', 'nosniff')
      .send(page);
  });

  app.get<{ Params: { file: string } }>('/portal/assets/:file', { config, logLevel: 'warn' }, async (req, reply) => {
    const type = Object.hasOwn(ASSETS, req.params.file) ? ASSETS[req.params.file] : undefined;
    const body = files.get(req.params.file);
    if (!type || !body) return reply.callNotFound();
    return reply.type(type).header('cache-control', 'no-cache').header('x-content-type-options', 'nosniff').send(body);
  });
}
