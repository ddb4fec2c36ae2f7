// One @fastify/http-proxy registration per upstream prefix of the service registry. Request headers are
// rewritten here and only here: the client's identity headers, API key and
// store-command counting header are dropped, the gateway's own identity headers and
// request id are set, and the counting header when the gateway counts the request.
import { Readable, Transform } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import httpProxy from '@fastify/http-proxy';
import { BalancedPool } from 'undici';
import { payloadTooLarge, serviceUnavailable } from '@lpm/shared/errors';
import { BODY_LIMIT } from '@lpm/shared/http/app';
import { COUNT_COMMANDS_HEADER, countedCallHeaders } from '@lpm/shared/counted-requests';
import { IDENTITY_HEADER_NAMES, identityHeaders } from '@lpm/shared/identity';
import { replicaUrls } from '@lpm/shared/service/names';
import { PROXIED_PREFIXES } from '@lpm/shared/service/registry';
import { injectTraceHeaders } from '@lpm/shared/telemetry';
import type { Upstreams } from '../config.ts';
import { identityOf, type Principal } from '../domain/accounts.ts';
import { upstreamTimer } from '../metrics.ts';

export interface ProxyOptions {
  upstreams: Upstreams;
  internalToken: string;
  /** How long an upstream may take to send its headers, and between body chunks. */
  timeoutMs: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    bodyTooLarge?: boolean;
    /** When the request was handed to its upstream (performance.now()). */
    sentUpstreamAt?: number;
  }
}

type Headers = Record<string, string | string[] | undefined>;

/** The caller's credentials, identity headers and counting opt-in: the gateway sets its own. */
const DROPPED_HEADERS = new Set([...IDENTITY_HEADER_NAMES, 'authorization', COUNT_COMMANDS_HEADER]);

export async function proxyRoutes(app: FastifyInstance, opts: ProxyOptions): Promise<void> {
  // A principal is one key lookup's answer (PrincipalCache): its headers are encoded once, not per request.
  const identityHeadersOf = new WeakMap<Principal, Record<string, string>>();
  const upstreamIdentity = (principal: Principal): Record<string, string> => {
    let headers = identityHeadersOf.get(principal);
    if (!headers)
      identityHeadersOf.set(principal, (headers = identityHeaders(identityOf(principal), opts.internalToken)));
    return headers;
  };

  const rewriteRequestHeaders = (req: FastifyRequest, headers: Headers): Headers => {
    const principal = req.principal;
    if (!principal) throw new Error('proxying a request that was not authenticated');
    const out: Headers = {};
    for (const name in headers) if (!DROPPED_HEADERS.has(name)) out[name] = headers[name];
    Object.assign(out, upstreamIdentity(principal), countedCallHeaders());
    out['x-request-id'] = req.id;
    req.sentUpstreamAt = performance.now();
    // The upstream continues the gateway's span, not the caller's.
    return injectTraceHeaders(out);
  };

  const onError = (reply: FastifyReply, { error }: { error: Error }) => {
    if (reply.request.bodyTooLarge) {
      reply.header('connection', 'close');
      reply.send(payloadTooLarge());
      return;
    }
    reply.send(serviceUnavailable('Service unavailable', { cause: error }));
  };

  for (const route of PROXIED_PREFIXES) {
    const answeredIn = upstreamTimer(route.upstream);
    const rewriteHeaders = (headers: Headers, req: FastifyRequest): Headers => {
      if (req.sentUpstreamAt !== undefined) answeredIn((performance.now() - req.sentUpstreamAt) / 1000);
      return headers;
    };
    const upstreams = replicaUrls(opts.upstreams[route.upstream]);
    const undici = {
      connections: 128,
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
      connect: { timeout: Math.min(opts.timeoutMs, 5000) },
    };
    await app.register(async (scope) => {
      // The proxy installs its own pass-through parsers in place of the shared JSON one.
      scope.removeAllContentTypeParsers();
      scope.addHook('preHandler', (req, _reply, done) => {
        // The proxy hands the body on as the raw request stream; anything else
        // is the shared app's empty-body default, which must not be forwarded.
        // A declared length was held to BODY_LIMIT already (access.ts), and the
        // HTTP parser reads no more than it: only a chunked body needs counting.
        const body = req.body instanceof Readable ? req.body : undefined;
        req.body = body && req.headers['content-length'] === undefined ? capped(req, body) : body;
        done();
      });
      await scope.register(httpProxy, {
        // Several replicas (a comma-separated URL setting): undici's BalancedPool spreads
        // the requests and sends fewer to a replica whose requests fail.
        upstream: upstreams[0],
        prefix: route.prefix,
        rewritePrefix: route.prefix,
        config: { adminOnly: route.adminOnly ?? false, readOnly: route.readOnly ?? false },
        disableRequestLogging: true,
        undici: (upstreams.length > 1
          ? new BalancedPool(upstreams, undici)
          : { ...undici, tls: { rejectUnauthorized: true } }) as never,
        replyOptions: {
          rewriteRequestHeaders: rewriteRequestHeaders as never,
          rewriteHeaders: rewriteHeaders as never,
          onError: onError as never,
          // Never replay a request on the caller's behalf (reply-from retries GETs on 503 by default).
          retryDelay: () => null,
        },
      });
    });
  }
}

/** The body stream, failing once it passes BODY_LIMIT (a chunked body declares no length). */
function capped(req: FastifyRequest, source: Readable): Readable {
  let seen = 0;
  const limiter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen += chunk.length;
      if (seen <= BODY_LIMIT) return done(null, chunk);
      req.bodyTooLarge = true;
      source.unpipe(limiter);
      // Discard the rest so the 413 can still be written on this connection.
      source.resume();
      done(payloadTooLarge());
    },
  });
  source.on('error', (e) => limiter.destroy(e));
  return source.pipe(limiter);
}
