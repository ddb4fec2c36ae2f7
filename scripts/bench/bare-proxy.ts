// The gateway's floor for the `gateway` scenario, run as a child process as the gateway
// is and with its Node flags and malloc settings (process-settings.ts): a bare Fastify
// app with one @fastify/http-proxy registration for /v1/clients, the same undici pool
// size as the gateway's, no logging, no limits, and an API key
// turned into the identity headers by a lookup in a map given at start. Prints
// `listening <port>` once it listens on 127.0.0.1.
//   BARE_PROXY_UPSTREAM    the clients service's URL
//   BARE_PROXY_IDENTITIES  a JSON file: { "<api key>": { <identity headers> } }
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import httpProxy from '@fastify/http-proxy';

type Headers = Record<string, string | string[] | undefined>;

const upstream = process.env.BARE_PROXY_UPSTREAM!;
const identities = new Map(
  Object.entries(
    JSON.parse(readFileSync(process.env.BARE_PROXY_IDENTITIES!, 'utf8')) as Record<string, Record<string, string>>,
  ),
);

const app = Fastify({ logger: false });
await app.register(httpProxy, {
  upstream,
  prefix: '/v1/clients',
  rewritePrefix: '/v1/clients',
  undici: { connections: 128 } as never,
  replyOptions: {
    rewriteRequestHeaders: (_req: unknown, headers: Headers): Headers => {
      const { authorization, ...rest } = headers;
      const key = typeof authorization === 'string' ? authorization.replace(/^Bearer /, '') : '';
      return { ...rest, ...identities.get(key) };
    },
  },
});
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : ''}\n`);
for (const signal of ['SIGTERM', 'SIGINT'] as const)
  process.once(signal, () => void app.close().then(() => process.exit(0)));
