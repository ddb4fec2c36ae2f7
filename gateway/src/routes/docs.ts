// GET /docs: the API reference, rendered in the browser by Scalar's standalone
// bundle from /v1/openapi.json. Everything comes from this gateway (the bundle is
// read from node_modules once): no CDN, no web fonts, no telemetry, and a CSP
// that lets the page reach nothing but its own origin.
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';

const BUNDLE = new URL('./browser/standalone.js', import.meta.resolve('@scalar/api-reference'));

const CONFIGURATION = {
  url: '/v1/openapi.json',
  withDefaultFonts: false,
  telemetry: false,
  hideClientButton: true,
  defaultOpenAllTags: true,
  showOperationId: true,
  // Scalar's hosted services (its AI agent, MCP generator, developer toolbar) are not this API's.
  showDeveloperTools: 'never',
  agent: { disabled: true },
  mcp: { disabled: true },
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Legal practice management API reference</title>
</head>
<body>
<div id="app"></div>
<script src="/docs/scalar.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

const INIT = `Scalar.createApiReference('#app', ${JSON.stringify(CONFIGURATION)});\n`;

const CSP = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-eval'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
].join('; ');

export function docsRoutes(app: FastifyInstance): void {
  let bundle: Buffer | undefined;
  const config = { public: true };
  app.get('/docs', { config, logLevel: 'warn' }, async (_req, reply) =>
    reply.type('text/html; charset=utf-8').header('content-security-policy', CSP).send(PAGE),
  );
  app.get('/docs/init.js', { config, logLevel: 'warn' }, async (_req, reply) =>
    reply.type('text/javascript; charset=utf-8').send(INIT),
  );
  app.get('/docs/scalar.js', { config, logLevel: 'warn' }, async (_req, reply) =>
    reply
      .type('text/javascript; charset=utf-8')
      .header('cache-control', 'public, max-age=3600')
      .send((bundle ??= readFileSync(BUNDLE))),
  );
}
