// The gateway as an app: no listening here (server.ts does that). It owns the
// store and Redis client it is given and closes them with itself.
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { createHttpApp, type HttpAppOptions } from '@lpm/shared/http/app';
import { metricsRoute } from '@lpm/shared/http/request-metrics';
import { SERVICE_NAMES, type ServiceName } from '@lpm/shared/service/names';
import type { Store } from '@lpm/shared/store/orm';
import { ServiceClient } from '@lpm/shared/upstream/service-client';
import { HEADER, sameSecret } from '@lpm/shared/identity';
import type { Upstreams } from './config.ts';
import { Accounts, type Principal } from './domain/accounts.ts';
import { Settings } from './domain/settings.ts';
import { CalendarSync } from './domain/calendar-sync.ts';
import { markInternalRoutes } from './internal-listener.ts';
import { TIME_ZONE_OWNERS, TimeZoneServices } from './upstream/time-zone-owners.ts';
import { ActivitiesService } from './upstream/activities-service.ts';
import { gatewayRepositories, type GatewayRepositories } from './data/store.ts';
import { Authenticator } from './auth/authenticator.ts';
import { clientAddress, type TrustedProxies } from './auth/client-address.ts';
import { PrincipalCache } from './auth/principal-cache.ts';
import { PrincipalChanges } from './auth/principal-changes.ts';
import { AuthFailures } from './limits/auth-failures.ts';
import { Counters } from './limits/counters.ts';
import { TeamLimits } from './limits/team-limits.ts';
import { PublicRequests } from './limits/public-requests.ts';
import { closeRedis } from '@lpm/shared/redis';
import { withTimeout } from './timeout.ts';
import { accessControl } from './routes/access.ts';
import { healthRoute } from './routes/health.ts';
import { probeRoutes } from '@lpm/shared/http/health';
import { internalUsersRoute } from './routes/internal-users.ts';
import { openApiRoute } from './routes/openapi.ts';
import { docsRoutes } from './routes/docs.ts';
import { proxyRoutes } from './routes/proxy.ts';
import { settingsRoutes } from './routes/settings.ts';
import { portalSessionRoutes } from './routes/portal-sessions.ts';
import { portalRoutes } from './routes/portal.ts';
import { PortalSessions } from './domain/portal-sessions.ts';
import { isPortalToken } from './domain/keys.ts';
import { CasesAndDealsServices } from './upstream/cases-and-deals-services.ts';

export interface GatewayDeps {
  /** The gateway's store (openGatewayStore). */
  store: Store;
  /** Redis for the limits (createLimitsRedis). */
  redis: Redis;
  /** Prefix of every Redis key the gateway writes (REDIS_KEY_PREFIX). */
  redisKeyPrefix: string;
  internalToken: string;
  upstreams: Upstreams;
  /** The services this deployment runs (default: all six); /health checks only these, and a service not run has no records. */
  deployed?: readonly ServiceName[];
  /** The process logger (createLogger); tests pass `logger: false` instead. */
  loggerInstance?: HttpAppOptions['loggerInstance'];
  logger?: HttpAppOptions['logger'];
  /** How long key lookups (hits and misses) are cached; at most 1 s (default 1000). */
  keyCacheTtlMs?: number;
  /**
   * Upstream headers/body timeout (default 15 s): well within a client's usual 30 s,
   * and well past a service's own answer to a store that hangs (STORE_OPERATION_TIMEOUT_MS).
   */
  upstreamTimeoutMs?: number;
  /** How long a key lookup may wait for the store before the request gets 503 (default 5 s). */
  storeTimeoutMs?: number;
  /** Timeout of the store's and each upstream's /health check (default 2 s). */
  healthTimeoutMs?: number;
  /** The proxies whose X-Forwarded-For gives the client's address (TRUSTED_PROXIES; default none: the socket's address). */
  trustedProxies?: TrustedProxies;
  /** Failed authentications per client address and window before 429 (AUTH_FAILURE_LIMIT, default 50). */
  authFailureLimit?: number;
  /** That window (AUTH_FAILURE_WINDOW, default 1 min). */
  authFailureWindowMs?: number;
  /** Requests to the routes served without a key per client address and window before 429 (PUBLIC_RATE_LIMIT, default 120). */
  publicRateLimit?: number;
  /** That window (PUBLIC_RATE_WINDOW, default 1 min). */
  publicRateWindowMs?: number;
  /** How often the services' OpenAPI documents are read again for a change, at most (default 5 s). */
  openApiRefreshMs?: number;
  /** How often court calendar changes not yet applied to deadline activities are sent again (default 1 min). */
  calendarSyncIntervalMs?: number;
  /** How old such a change must be before it is sent again (default 30 s; CalendarSyncOptions.graceMs). */
  calendarSyncGraceMs?: number;
}

export function buildGatewayApp(deps: GatewayDeps): FastifyInstance {
  const app = createHttpApp({
    name: 'gateway',
    logger: deps.logger,
    loggerInstance: deps.loggerInstance,
    documented: false,
    // The bench's opt-in (counted-requests.ts) comes through the public port: a caller without the internal credential may not evict its traces.
    mayCountCommands: (req) => {
      const token = req.headers[HEADER.internalToken];
      return typeof token === 'string' && sameSecret(token, deps.internalToken);
    },
  });
  markInternalRoutes(app);
  const deployed = deps.deployed ?? SERVICE_NAMES;
  const upstreamTimeoutMs = deps.upstreamTimeoutMs ?? 15_000;
  const repositories = gatewayRepositories(deps.store.db);
  const accounts = new Accounts(repositories);
  const { calendarSync, settings } = startSettings(app, deps, { repositories, accounts, deployed, upstreamTimeoutMs });
  const portalSessions = new PortalSessions({ sessions: repositories.portalSessions, accounts });
  const { changes, principals } = startPrincipals(deps, repositories, (key) =>
    isPortalToken(key) ? portalSessions.authenticate(key) : accounts.authenticate(key),
  );
  const { counters, limits, authFailures, publicRequests } = createLimits(app, deps);

  app.addHook('onClose', async () => {
    changes.stop();
    await calendarSync.stop();
    await closeRedis(deps.redis);
    counters.close();
    principals.clear();
    await deps.store.close();
  });

  const addressOf = clientAddress(deps.trustedProxies ?? []);
  accessControl(app, {
    authenticator: new Authenticator({ principals, failures: authFailures }),
    limits,
    publicRequests,
    clientAddress: addressOf,
  });
  healthRoute(app, {
    upstreams: deps.upstreams,
    deployed,
    pingStore: () => deps.store.check(),
    timeoutMs: deps.healthTimeoutMs,
  });
  // The orchestrator's probes (internal listener only): ready needs the gateway's own store, not its upstreams
  // (one service down must not take the gateway out of rotation), nor Redis (limits fall back to in-process counters).
  probeRoutes(app, { ready: { store: () => deps.store.check() } });
  openApiRoute(app, {
    upstreams: deps.upstreams,
    deployed,
    timeoutMs: deps.healthTimeoutMs ?? 2000,
    refreshMs: deps.openApiRefreshMs,
  });
  docsRoutes(app);
  settingsRoutes(app, { settings, principals });
  portalSessionRoutes(app, portalSessions);
  portalRoutes(app, portalSessions);
  // Served on the internal listener only (internal-listener.ts), as are the probes and /internal/*.
  metricsRoute(app);
  internalUsersRoute(app, {
    accounts,
    internalToken: deps.internalToken,
    failures: authFailures,
    clientAddress: addressOf,
  });
  app.register(proxyRoutes, {
    upstreams: deps.upstreams,
    internalToken: deps.internalToken,
    timeoutMs: upstreamTimeoutMs,
  });
  return app;
}

interface SettingsParts {
  repositories: GatewayRepositories;
  accounts: Accounts;
  deployed: readonly ServiceName[];
  upstreamTimeoutMs: number;
}

/** Team settings, with the calendar sync they drive (started here). */
function startSettings(
  app: FastifyInstance,
  deps: GatewayDeps,
  { repositories, accounts, deployed, upstreamTimeoutMs }: SettingsParts,
) {
  const service = (name: ServiceName) =>
    new ServiceClient({
      name,
      baseUrl: deps.upstreams[name],
      internalToken: deps.internalToken,
      timeoutMs: upstreamTimeoutMs,
    });
  const calendarSync = new CalendarSync({
    syncs: repositories.calendarSyncs,
    accounts,
    deadlines: new ActivitiesService(service('activities'), deployed),
    zones: new TimeZoneServices(TIME_ZONE_OWNERS.filter((n) => deployed.includes(n)).map(service)),
    logger: app.log,
    graceMs: deps.calendarSyncGraceMs ?? 30_000,
  });
  calendarSync.start(deps.calendarSyncIntervalMs ?? 60_000);
  const settings = new Settings({
    teams: repositories.teams,
    accounts,
    phaseOwners: new CasesAndDealsServices({ cases: service('cases'), deals: service('deals'), deployed }),
    calendarSync,
  });
  return { calendarSync, settings };
}

/** The principals of API keys and portal session tokens, cached, and the poll of their changes (started here). */
function startPrincipals(
  deps: GatewayDeps,
  repositories: GatewayRepositories,
  authenticate: (key: string) => Promise<Principal | null>,
) {
  const storeTimeoutMs = deps.storeTimeoutMs ?? 5000;
  const changes = new PrincipalChanges({
    read: () => withTimeout(repositories.changes.version(), storeTimeoutMs, 'principal change poll'),
  });
  const principals = new PrincipalCache({
    lookup: (key) => withTimeout(authenticate(key), storeTimeoutMs, 'key lookup'),
    ttlMs: Math.min(deps.keyCacheTtlMs ?? 1000, 1000),
    changes,
  });
  changes.start();
  return { changes, principals };
}

/** The Redis-counted limits: per team, on failed authentications, and on the routes served without a key. */
function createLimits(app: FastifyInstance, deps: GatewayDeps) {
  const counters = new Counters({ redis: deps.redis, keyPrefix: deps.redisKeyPrefix, logger: app.log });
  const limits = new TeamLimits({ counters });
  const authFailures = new AuthFailures({
    counters,
    limit: deps.authFailureLimit ?? 50,
    windowMs: deps.authFailureWindowMs ?? 60_000,
  });
  const publicRequests = new PublicRequests({
    counters,
    limit: deps.publicRateLimit ?? 120,
    windowMs: deps.publicRateWindowMs ?? 60_000,
  });
  return { counters, limits, authFailures, publicRequests };
}
