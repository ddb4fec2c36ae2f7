// The Fastify instance every process of the platform starts from: envelopes,
// validation, request ids, the 1 MiB body limit and the one error handler.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import swagger from '@fastify/swagger';
import { createLogger } from '../logger.ts';
import { AppError, errorBody, notFound, toAppError, badRequest } from '../errors.ts';
import { compileValidator, fromAjvError } from './validation.ts';
import { tracedRequestListener } from '../telemetry.ts';

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
const REQUEST_ID_RE = /^[\w.:-]{1,200}$/;

export interface HttpAppOptions {
  name: string;
  /** A process's one logger; tests pass `false` through `logger` instead. */
  loggerInstance?: FastifyBaseLogger;
  logger?: FastifyServerOptions['logger'];
  /** Serve /openapi.json for the routes registered in plugins (services do; the gateway merges theirs). Default true. */
  documented?: boolean;
}

export function createHttpApp(opts: HttpAppOptions): FastifyInstance {
  const app = Fastify({
    ...(opts.logger !== undefined ? { logger: opts.logger } : { loggerInstance: opts.loggerInstance ?? createLogger(opts.name) }),
    bodyLimit: BODY_LIMIT,
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID_RE.test(given) ? given : randomUUID();
    },
    schemaErrorFormatter: (errors, part) => fromAjvError(errors[0] as never, part),
    routerOptions: { ignoreTrailingSlash: true },
    return503OnClosing: true,
    serverFactory: (handler) => createServer(tracedRequestListener(opts.name, handler)),
  });

  app.setValidatorCompiler(({ schema, httpPart }) => compileValidator(schema as never, httpPart));

  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: BODY_LIMIT }, (req, body, done) => {
    // The spec asks clients to send Content-Type: application/json on every request, GET and DELETE included.
    const text = String(body);
    req.rawBody = text;
    if (text.trim() === '') return done(null, {});
    parseJson(req, text, (err, parsed) => (err ? done(badRequest('Invalid JSON body'), undefined) : done(null, parsed)));
  });

  app.addHook('preValidation', async (req) => {
    if (req.body === undefined && (req.method === 'POST' || req.method === 'PUT')) req.body = {};
  });

  app.addHook('onSend', async (req, reply) => {
    reply.header('x-request-id', req.id);
  });

  app.setErrorHandler((err, req, reply) => {
    const appErr = err instanceof AppError ? err : toAppError(err);
    if (appErr.status >= 500) req.log.error({ err }, 'request failed');
    else req.log.info({ code: appErr.code, message: appErr.message }, 'request refused');
    return reply.status(appErr.status).send(errorBody(appErr));
  });

  app.setNotFoundHandler((req, reply) => {
    reply.status(404).send(errorBody(notFound('Route not found')));
  });

  // The OpenAPI document of the routes registered inside plugins (app.register),
  // which load after this one; the gateway merges the services' documents.
  if (opts.documented ?? true) {
    app.register(swagger, { openapi: { info: { title: opts.name, version: 'v1' } } });
    app.get('/openapi.json', { config: { public: true }, logLevel: 'warn' }, async () => app.swagger());
  }

  return app;
}
