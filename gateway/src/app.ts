// The gateway as an app: no listening here (server.ts does that). It owns the
// store and Redis client it is given and closes them with itself.
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { createHttpApp, type HttpAppOptions } from '@lpm/shared/http/app';
import type { Orm } from '@lpm/shared/store/orm';
import { Accounts } from './domain/accounts.ts';
import { PrincipalCache } from './auth/principal-cache.ts';
import { TeamLimits } from './limits/team-limits.ts';
import { closeRedis } from './limits/redis.ts';
import { pingStore } from './store.ts';
import { withTimeout } from './timeout.ts';
import { accessControl } from './http/access.ts';
import { healthRoute } from './http/health.ts';
import { internalUsersRoute } from './http/internal-users.ts';
import { openApiRoute } from './http/openapi.ts';
import { proxyRoutes, UPSTREAM_NAMES, type UpstreamName, type Upstreams } from './http/proxy.ts';
import { settingsRoutes } from './http/settings.ts';
import { Settings } from './domain/settings.ts';
import { upstreamPhasesInUse } from './upstream/phases-in-use.ts';

export interface GatewayDeps {
  /** The gateway's store (openGatewayStore). */
  orm: Orm;
  /** Redis for the limits (createLimitsRedis). */
  redis: Redis;
  /** Prefix of every Redis key the gateway writes (REDIS_KEY_PREFIX). */
  redisKeyPrefix: string;
  internalToken: string;
  upstreams: Upstreams;
  /** The services this deployment runs (default: all six); /health checks only these, and a service not run has no records. */
  deployed?: readonly UpstreamName[];
  /** The process logger (createLogger); tests pass `logger: false` instead. */
  loggerInstance?: HttpAppOptions['loggerInstance'];
  logger?: HttpAppOptions['logger'];
  /** How long key lookups (hits and misses) are cached; at most 1 s (default 1000). */
  keyCacheTtlMs?: number;
  /** Upstream headers/body timeout (default 30 s). */
  upstreamTimeoutMs?: number;
  /** How long a key lookup may wait for the store before the request gets 503 (default 5 s). */
  storeTimeoutMs?: number;
  /** Timeout of the store's and each upstream's /health check (default 2 s). */
  healthTimeoutMs?: number;
}

export function buildGatewayApp(deps: GatewayDeps): FastifyInstance {
  const app = createHttpApp({ name: 'gateway', logger: deps.logger, loggerInstance: deps.loggerInstance, documented: false });
  const deployed = deps.deployed ?? UPSTREAM_NAMES;
  const upstreamTimeoutMs = deps.upstreamTimeoutMs ?? 30_000;
  const accounts = new Accounts({ orm: deps.orm });
  const settings = new Settings({
    orm: deps.orm,
    accounts,
    phasesInUse: upstreamPhasesInUse({ upstreams: deps.upstreams, deployed, internalToken: deps.internalToken, timeoutMs: upstreamTimeoutMs }),
  });
  const principals = new PrincipalCache({
    lookup: (key) => withTimeout(accounts.authenticate(key), deps.storeTimeoutMs ?? 5000, 'key lookup'),
    ttlMs: Math.min(deps.keyCacheTtlMs ?? 1000, 1000),
  });
  const limits = new TeamLimits({ redis: deps.redis, keyPrefix: deps.redisKeyPrefix, logger: app.log });

  app.addHook('onClose', async () => {
    await closeRedis(deps.redis);
    limits.close();
    principals.clear();
    await deps.orm.close();
  });

  accessControl(app, { principals, limits });
  healthRoute(app, { upstreams: deps.upstreams, deployed, pingStore: () => pingStore(deps.orm), timeoutMs: deps.healthTimeoutMs });
  openApiRoute(app, { upstreams: deps.upstreams, deployed, timeoutMs: deps.healthTimeoutMs ?? 2000 });
  settingsRoutes(app, { settings, principals });
  internalUsersRoute(app, { accounts, internalToken: deps.internalToken });
  app.register(proxyRoutes, {
    upstreams: deps.upstreams,
    internalToken: deps.internalToken,
    timeoutMs: upstreamTimeoutMs,
  });
  return app;
}
