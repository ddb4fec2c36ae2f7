// Every request passes here first. An internal route asked anywhere but on the
// internal listener does not exist (404 Route not found). A public route (no key) is
// counted against its client address's limit (429), unless it came through the
// internal listener. Every other request: the failed-authentication throttle of the
// client's address (429), API key -> principal (401), the team's limits (429,
// RateLimit-* headers on every authenticated response), the key's scopes (403) and
// the declared body size (413).
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { forbidden, notFound, payloadTooLarge, rateLimited, unauthorized, type AppError } from '@lpm/shared/errors';
import { BODY_LIMIT } from '@lpm/shared/http/app';
import type { Scope } from '@lpm/shared/identity';
import type { PortalGrant, Principal } from '../domain/accounts.ts';
import { portalSessionExpired, portalTokenRefused } from '../contract/portal-errors.ts';
import type { Authentication, Authenticator } from '../auth/authenticator.ts';
import type { TeamLimits } from '../limits/team-limits.ts';
import type { AuthFailureDecision } from '../limits/auth-failures.ts';
import type { PublicRequests } from '../limits/public-requests.ts';
import { cameThroughInternal } from '../internal-listener.ts';
import { authFailures, authThrottles, publicThrottles, rateLimitRefusals } from '../metrics.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    /** Every method needs the admin scope (webhooks, team settings). */
    adminOnly?: boolean;
    /** Every method needs only the read scope (a computation that writes nothing). */
    readOnly?: boolean;
  }
}

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface AccessOptions {
  authenticator: Authenticator;
  limits: TeamLimits;
  /** The per-address limit of public routes (PUBLIC_RATE_LIMIT). */
  publicRequests: PublicRequests;
  /** The client's address behind the trusted proxies (clientAddress, TRUSTED_PROXIES). */
  clientAddress(req: FastifyRequest): string;
}

export function accessControl(app: FastifyInstance, opts: AccessOptions): void {
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (req, reply) => {
    // routeOptions is built anew on each read.
    const config = req.routeOptions.config;
    if (config?.internalOnly && !cameThroughInternal(req)) throw notFound('Route not found');
    if (config?.public) {
      if (!cameThroughInternal(req)) await chargePublic(reply, opts.publicRequests, opts.clientAddress(req));
      return;
    }
    const checked = opts.authenticator.check(req.headers.authorization, opts.clientAddress(req));
    // Most keys are answered from the cache at once: no promise to wait for.
    const principal = principalOf(reply, checked instanceof Promise ? await checked : checked);
    if (principal.portal) refuseOutsidePortal(req.routeOptions.url, principal.portal);
    req.principal = principal;
    const decision = await opts.limits.consume(principal.team.id, principal.team.plan);
    setLimitHeaders(reply, decision);
    if (!decision.allowed) {
      rateLimitRefusals.inc({ plan: principal.team.plan });
      reply.header('retry-after', String(decision.retryAfterSeconds));
      throw rateLimited('Rate limit exceeded', { window: decision.window, retry_after: decision.retryAfterSeconds });
    }
    if (!principal.key.scopes.includes(requiredScope(req.method, config))) throw forbidden('Insufficient permissions');
    if (declaredLength(req) > BODY_LIMIT) {
      reply.header('connection', 'close');
      throw payloadTooLarge();
    }
  });
}

/**
 * A portal session's token is good for the routes of the webhooks prefix (matched
 * route, not the raw path) and nothing else, not even opening or revoking sessions;
 * its expiry is checked here, since a cached principal may outlive it by the cache's time.
 */
function refuseOutsidePortal(route: string | undefined, grant: PortalGrant): void {
  if (grant.expiresAt <= Date.now()) throw portalSessionExpired();
  const webhooks = route === '/v1/webhooks' || route?.startsWith('/v1/webhooks/');
  if (!webhooks || route!.startsWith('/v1/webhooks/portal-sessions')) throw portalTokenRefused();
}

async function chargePublic(reply: FastifyReply, requests: PublicRequests, address: string): Promise<void> {
  const decision = await requests.charge(address);
  if (decision.allowed) return;
  publicThrottles.inc();
  setLimitHeaders(reply, decision);
  reply.header('retry-after', String(decision.resetSeconds));
  throw rateLimited('Rate limit exceeded', { reason: 'public_requests', retry_after: decision.resetSeconds });
}

/** The request's principal; 401, or 429 while the client's address is past its failed authentications (authenticator.ts). */
function principalOf(reply: FastifyReply, result: Authentication): Principal {
  if ('principal' in result) return result.principal;
  if ('refused' in result) {
    authFailures.inc({ reason: result.refused === 'Missing API key' ? 'missing' : 'invalid' });
    throw unauthorized(result.refused);
  }
  throw tooManyFailures(reply, result.throttled);
}

/** The 429 of an address past its failed authentications (API keys, the internal token), with its headers set. */
export function tooManyFailures(reply: FastifyReply, throttled: AuthFailureDecision): AppError {
  authThrottles.inc();
  setLimitHeaders(reply, throttled);
  reply.header('retry-after', String(throttled.resetSeconds));
  return rateLimited('Too many failed authentications', {
    reason: 'auth_failures',
    retry_after: throttled.resetSeconds,
  });
}

function requiredScope(method: string, config: FastifyContextConfig | undefined): Scope {
  if (config?.adminOnly) return 'admin';
  if (config?.readOnly) return 'read';
  return READ_METHODS.has(method) ? 'read' : 'write';
}

function setLimitHeaders(reply: FastifyReply, d: { limit: number; remaining: number; resetSeconds: number }): void {
  reply.header('ratelimit-limit', String(d.limit));
  reply.header('ratelimit-remaining', String(d.remaining));
  reply.header('ratelimit-reset', String(d.resetSeconds));
}

function declaredLength(req: FastifyRequest): number {
  const raw = req.headers['content-length'];
  return raw === undefined ? 0 : Number(raw);
}
