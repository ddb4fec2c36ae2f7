// Every request but public routes passes here first: API key -> principal (401),
// the team's limits (429, RateLimit-* headers on every authenticated response),
// the key's scopes (403) and the declared body size (413).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { forbidden, payloadTooLarge, rateLimited, serviceUnavailable, unauthorized } from '@lpm/shared/errors';
import { BODY_LIMIT } from '@lpm/shared/http/app';
import type { Scope } from '@lpm/shared/identity';
import type { Principal } from '../domain/accounts.ts';
import type { PrincipalCache } from '../auth/principal-cache.ts';
import type { LimitDecision, TeamLimits } from '../limits/team-limits.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    /** Every method needs the admin scope (webhooks, team settings). */
    adminOnly?: boolean;
  }
}

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const BEARER_RE = /^Bearer +(\S+)$/i;

export interface AccessOptions {
  principals: PrincipalCache;
  limits: TeamLimits;
}

export function accessControl(app: FastifyInstance, opts: AccessOptions): void {
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (req, reply) => {
    if (req.routeOptions.config?.public) return;
    const principal = await authenticate(req, opts.principals);
    req.principal = principal;
    const decision = await opts.limits.consume(principal.team.id, principal.team.plan);
    setLimitHeaders(reply, decision);
    if (!decision.allowed) {
      reply.header('retry-after', String(decision.retryAfterSeconds));
      throw rateLimited('Rate limit exceeded', { window: decision.window, retry_after: decision.retryAfterSeconds });
    }
    if (!principal.key.scopes.includes(requiredScope(req))) throw forbidden('Insufficient permissions');
    if (declaredLength(req) > BODY_LIMIT) {
      reply.header('connection', 'close');
      throw payloadTooLarge();
    }
  });
}

async function authenticate(req: FastifyRequest, principals: PrincipalCache): Promise<Principal> {
  const header = req.headers.authorization;
  if (header === undefined || header.trim() === '') throw unauthorized('Missing API key');
  const match = BEARER_RE.exec(header.trim());
  if (!match) throw unauthorized('Invalid API key');
  let principal: Principal | null;
  try {
    principal = await principals.get(match[1]);
  } catch (e) {
    throw serviceUnavailable('Service unavailable', { cause: e });
  }
  if (!principal) throw unauthorized('Invalid API key');
  return principal;
}

function requiredScope(req: FastifyRequest): Scope {
  if (req.routeOptions.config?.adminOnly) return 'admin';
  return READ_METHODS.has(req.method) ? 'read' : 'write';
}

function setLimitHeaders(reply: FastifyReply, d: LimitDecision): void {
  reply.header('ratelimit-limit', String(d.limit));
  reply.header('ratelimit-remaining', String(d.remaining));
  reply.header('ratelimit-reset', String(d.resetSeconds));
}

function declaredLength(req: FastifyRequest): number {
  const raw = req.headers['content-length'];
  return raw === undefined ? 0 : Number(raw);
}
