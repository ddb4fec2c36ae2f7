// The Fastify instance every process of the platform starts from: envelopes,
// validation, request ids, the 1 MiB body limit, the one error handler and every
// route's requests timed (request-metrics.ts).
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify';
import swagger from '@fastify/swagger';
import { createLogger } from '../logger.ts';
import { AppError, errorBody, notFound, toAppError, badRequest, invalidField } from '../errors.ts';
import { compileValidator, fromAjvError, nulStringPath } from './validation.ts';
import { tracedRequestListener } from '../telemetry.ts';
import { timeRequests } from './request-metrics.ts';

type CallbackBodyParser = (
  req: FastifyRequest,
  body: string,
  done: (err: Error | null, body?: unknown) => void,
) => void;

declare module 'fastify' {
  interface FastifyRequest {
    /** The JSON body's text as received (for hashing; never logged). */
    rawBody?: string;
  }
  interface FastifyContextConfig {
    /** Served without credentials (health, OpenAPI). */
    public?: boolean;
  }
}

export const BODY_LIMIT = 1024 * 1024;
export const KEEP_ALIVE_TIMEOUT_MS = 72_000;
const REQUEST_ID_RE = /^[\w.:-]{1,200}$/;

export interface HttpAppOptions {
  name: string;
  /** A process's one logger; tests pass `false` through `logger` instead. */
  loggerInstance?: FastifyBaseLogger;
  logger?: FastifyServerOptions['logger'];
  /** Serve /openapi.json for the routes registered in plugins (services do; the gateway merges theirs). Default true. */
  documented?: boolean;
  /** The tags of its documented operations, as its /openapi.json carries them. */
  tags?: readonly object[];
  /** Whether a request that asks for its store commands to be counted (counted-requests.ts) is. Default: every one. */
  mayCountCommands?: (req: IncomingMessage) => boolean;
}

export function createHttpApp(opts: HttpAppOptions): FastifyInstance {
  const app = Fastify({
    ...(opts.logger !== undefined
      ? { logger: opts.logger }
      : { loggerInstance: opts.loggerInstance ?? createLogger(opts.name) }),
    bodyLimit: BODY_LIMIT,
    requestIdHeader: false,
    genReqId: requestIdOf,
    schemaErrorFormatter: (errors, part) => fromAjvError(errors[0] as never, part),
    routerOptions: { ignoreTrailingSlash: true },
    // What the router refuses before any hook runs, which Fastify would answer
    // with its own body: a path that does not decode, or is not a path at all
    // (FST_ERR_BAD_URL: no route has it), a parameter past 100 characters (FST_ERR_MAX_PARAM_LENGTH).
    frameworkErrors: (err, req, reply) => {
      const appErr = urlProblem(req.url) ?? (err.code === 'FST_ERR_BAD_URL' ? noSuchRoute() : toAppError(err));
      refused(req, appErr, err);
      (reply as FastifyReply).header('x-request-id', req.id).status(appErr.status).send(errorBody(appErr));
    },
    return503OnClosing: true,
    clientErrorHandler: answerUnparsable,
    serverFactory: (handler) => {
      const server = createServer(tracedRequestListener(opts.name, handler, opts.mayCountCommands));
      // Fastify's own default, which it does not apply to a factory's server: Node's
      // 5 s would close idle connections a load balancer (idle timeout ~60 s) or a
      // client still counts as open, and their next request fails ("other side closed").
      server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
      return server;
    },
  });

  app.setValidatorCompiler(({ schema, httpPart }) => compileValidator(schema as never, httpPart));
  timeRequests(app, opts.name);
  checkRequests(app);

  app.setErrorHandler((err, req, reply) => {
    const appErr = err instanceof AppError ? err : err instanceof URIError ? invalidUrlEncoding() : toAppError(err);
    refused(req, appErr, err);
    return reply.status(appErr.status).send(errorBody(appErr));
  });

  app.setNotFoundHandler((req, reply) => {
    reply.status(404).send(errorBody(noSuchRoute()));
  });

  // The OpenAPI document of the routes registered inside plugins (app.register),
  // which load after this one; the gateway merges the services' documents.
  if (opts.documented ?? true) {
    app.register(swagger, {
      openapi: { openapi: '3.1.0', info: { title: opts.name, version: 'v1' }, tags: [...(opts.tags ?? [])] as never },
    });
    app.get('/openapi.json', { config: { public: true }, logLevel: 'warn' }, async () => app.swagger());
  }

  return app;
}

/** The client's X-Request-Id when it is a usable one, else a new one. */
function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID_RE.test(given) ? given : randomUUID();
}

/** The URL check, the JSON body parser, and the body checks every request passes. */
function checkRequests(app: FastifyInstance): void {
  // The hooks every request passes take a callback: an async hook costs each request two promises more.
  // First of all hooks, for every route and the not-found handler alike.
  app.addHook('onRequest', (req, _reply, done) => done(urlProblem(req.url) ?? undefined));

  // fastify's default JSON parser is its callback form (the type also admits one that returns a promise).
  const parseJson = app.getDefaultJsonParser('error', 'error') as CallbackBodyParser;
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: BODY_LIMIT }, (req, body, done) => {
    // Clients send Content-Type: application/json on every request, GET and DELETE included (docs/decisions.md §10).
    const text = String(body);
    req.rawBody = text;
    if (text.trim() === '') return done(null, {});
    parseJson(req, text, (err, parsed) =>
      err ? done(badRequest('Invalid JSON body'), undefined) : done(null, parsed),
    );
  });

  app.addHook('preValidation', (req, _reply, done) => {
    if (req.body === undefined && (req.method === 'POST' || req.method === 'PUT')) req.body = {};
    done();
  });

  // After the schema (a field's own rule speaks first): JSON carries NUL only
  // escaped, and the store cannot keep it in any string.
  app.addHook('preHandler', (req, _reply, done) => {
    const nul = req.rawBody?.includes('\\u0000') ? nulStringPath(req.body) : undefined;
    if (nul === undefined) return done();
    done(nul ? invalidField(nul, `${nul} may not contain a null character`) : badRequest('Invalid JSON body'));
  });

  app.addHook('onSend', (req, reply, payload, done) => {
    reply.header('x-request-id', req.id);
    done(null, payload);
  });
}

function refused(req: FastifyRequest, appErr: AppError, err: unknown): void {
  if (appErr.status >= 500) req.log.error({ err }, 'request failed');
  else req.log.info({ code: appErr.code, message: appErr.message }, 'request refused');
}

/**
 * A request Node's HTTP parser refused (a request line that is not HTTP, a bad
 * header, headers past the size limit, too slow to arrive): no route, no hook and
 * no request id exist yet, so the answer is written to the socket here, in the
 * envelope, with an X-Request-Id of its own, and the connection closed.
 */
function answerUnparsable(this: FastifyInstance, err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, reason, appErr] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', new AppError(431, 'VALIDATION_ERROR', 'Request headers too large')]
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', new AppError(408, 'VALIDATION_ERROR', 'Request not received in time')]
        : [400, 'Bad Request', badRequest('Malformed HTTP request')];
  const requestId = randomUUID();
  this.log.info({ code: err.code, requestId }, 'unparsable request refused');
  const body = JSON.stringify(errorBody(appErr));
  if (!socket.writable) return void socket.destroy();
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
}

const invalidUrlEncoding = () => badRequest('Invalid URL encoding');
const noSuchRoute = () => notFound('Route not found');

/**
 * A `.` or `..` segment, or one that starts or ends with `..`, in a decoded path
 * whose backslashes are read as slashes. URL parsers (WHATWG URL, so undici and
 * @fastify/reply-from) resolve `..`, `%2e%2e` and `\..\` against the segments before
 * them, which would take a proxied request to another resource; reply-from also
 * refuses any path with `/..` or `../` once decoded.
 */
const DOT_SEGMENT = /(?:^|\/)\.\.|\.\.(?:\/|$)|(?:^|\/)\.(?:\/|$)/;

/**
 * What makes a request's URL unusable, whatever its route: percent-encoding that
 * does not decode (path or query: 400), a NUL in the query (400: the local store
 * refuses it in any query). A path with a dot segment (see DOT_SEGMENT) or a NUL is
 * one no route has: it answers as an unknown route does (404), so no spelling of
 * an internal route (internal-listener.ts in the gateway) answers otherwise than
 * the route's absence.
 */
export function urlProblem(url: string): AppError | null {
  const q = url.indexOf('?');
  let path = q < 0 ? url : url.slice(0, q);
  if (url.includes('%')) {
    try {
      decodeURIComponent(url);
      path = decodeURIComponent(path);
    } catch {
      return invalidUrlEncoding();
    }
  }
  if (path.includes('\0') || DOT_SEGMENT.test(path.replaceAll('\\', '/'))) return noSuchRoute();
  if (url.includes('%00')) return badRequest('URL may not contain a null character');
  return null;
}
