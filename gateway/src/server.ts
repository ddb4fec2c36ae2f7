// Starts the gateway: config, store, Redis, HTTP; stops cleanly on SIGTERM or SIGINT.
// It listens whatever state the store is in: not ready until the store is set up.
import { createLogger } from '@lpm/shared/logger';
import { runProcess } from '@lpm/shared/service/process';
import { startTelemetry } from '@lpm/shared/telemetry';
import { startProcessMetrics } from '@lpm/shared/metrics';
import { stopOnSignals } from '@lpm/shared/service/shutdown';
import { buildGatewayApp } from './app.ts';
import { internalServer } from './internal-listener.ts';
import { readGatewayConfig } from './config.ts';
import { createRedis, redisReady } from '@lpm/shared/redis';
import { startGatewayStore } from './data/store.ts';

async function start(): Promise<void> {
  const config = readGatewayConfig();
  const logger = createLogger('gateway', config.logLevel);
  const telemetry = startTelemetry({ serviceName: 'gateway' });
  startProcessMetrics('gateway');
  const store = await startGatewayStore({ url: config.mongoUrl, dbPrefix: config.dbPrefix, logger });
  const redis = createRedis(config.redisUrl, 'lpm-gateway-limits');
  const app = buildGatewayApp({
    store,
    redis,
    redisKeyPrefix: config.redisKeyPrefix,
    internalToken: config.internalToken,
    upstreams: config.upstreams,
    deployed: config.deployed,
    trustedProxies: config.trustedProxies,
    authFailureLimit: config.authFailureLimit,
    authFailureWindowMs: config.authFailureWindowMs,
    publicRateLimit: config.publicRateLimit,
    publicRateWindowMs: config.publicRateWindowMs,
    loggerInstance: logger,
  });

  stopOnSignals(app.log, async () => {
    await app.close();
    await telemetry.shutdown();
  });

  // Limits work without Redis (in-process fallback), so a slow Redis only delays the start a little.
  if (!(await redisReady(redis, 3000)))
    app.log.warn('Redis not ready at start: rate limits use in-process counters until it is');
  const internal = internalServer(app); // before listen: it adds the app's onClose hook
  await app.listen({ port: config.port, host: config.host });
  await new Promise<void>((resolve, reject) =>
    internal.once('error', reject).listen(config.internalPort, config.internalHost, resolve),
  );
  app.log.info(`internal routes on ${config.internalHost}:${config.internalPort}`);
  // Settles once the store is set up (or closed); rejects only on an error that is not the store being down.
  await store.ready;
}

// Started only as the process's entry point: importing it (scripts/warm-compile-cache.ts) starts nothing.
if (import.meta.main) await runProcess('gateway', start);
