// Starts one domain service: config, telemetry, store, broker, HTTP, then (once the
// store answers) the outbox relay and the background work; and stops them in
// reverse order on SIGTERM or SIGINT.
import { setTimeout as delay } from 'node:timers/promises';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { createLogger } from '../logger.ts';
import type { Options } from '@mikro-orm/mongodb';
import { amqpUrl, readConfig, str, url, duration, platformSettings, retention } from '../config.ts';
import { HTTP, SERVICE_PORTS, serviceUrlSettings, type ServiceName } from './names.ts';
import { startStore, type RetiredIndex, type Store } from '../store/orm.ts';
import type { Db } from 'mongodb';
import { Broker, purgeDedupeRecords, type ConsumerHandle } from '../messaging/broker.ts';
import { OutboxRelay } from '../outbox/relay.ts';
import { createOutboxIndexes } from '../outbox/fields.ts';
import { startTelemetry } from '../telemetry.ts';
import { stopOnSignals } from './shutdown.ts';
import type { Logger } from '../logger.ts';
import { purgeIdempotencyKeys } from '../http/idempotency.ts';
import { startProcessMetrics } from '../metrics.ts';
import { timedPublisher, watchOutboxes } from '../outbox/outbox-metrics.ts';
import { watchQueues } from '../messaging/queue-metrics.ts';
import { probeRoutes } from '../http/health.ts';
import { backoffDelayMs } from '../backoff.ts';

export function readServiceConfig(name: ServiceName, env: NodeJS.ProcessEnv = process.env) {
  const config = readConfig(
    {
      ...platformSettings(SERVICE_PORTS[name]),
      amqpUrl: ['AMQP_URL', amqpUrl],
      exchange: ['AMQP_EXCHANGE', str('lpm.events')],
      gatewayUrl: ['GATEWAY_URL', url('http://127.0.0.1:8080', HTTP)],
      schedulerIntervalMs: ['SCHEDULER_INTERVAL', duration('1m')],
      consumerRetryForMs: ['CONSUMER_RETRY_FOR', positiveDuration('24h')],
      dedupeRetentionMs: ['DEDUPE_RETENTION', retention('7d')],
    },
    env,
  );
  return { ...config, urls: readConfig(serviceUrlSettings(), env) };
}

/** A duration above zero (a consumer that never retries a transient failure would dead-letter at the first one). */
function positiveDuration(fallback: string) {
  const parse = duration(fallback);
  return (raw: string | undefined, name: string) => {
    const ms = parse(raw, name);
    if (ms <= 0) throw new Error(`must be a duration above zero: ${raw}`);
    return ms;
  };
}

export type ServiceConfig = ReturnType<typeof readServiceConfig>;

export interface ServiceRuntime {
  config: ServiceConfig;
  logger: FastifyBaseLogger;
  /** The service's database; repositories in data/ are built on it. */
  db: Db;
  broker: Broker;
  /** The outbox relay: repositories hand it the events they write (store/record-store.ts). */
  relay: OutboxRelay;
}

export interface ServiceDefinition {
  name: ServiceName;
  entities: Options['entities'];
  /** Indexes the store holds and the entities no longer declare: dropped at start. */
  retiredIndexes?: RetiredIndex[];
  /** Collections whose documents carry outbox events. */
  outboxCollections: string[];
  build(rt: ServiceRuntime): ServiceParts;
}

/** Work a service runs beside its HTTP app: consumers, time signals. */
export interface BackgroundTask {
  start(): Promise<unknown>;
  stop(): Promise<void>;
}

export interface ServiceParts {
  app: FastifyInstance;
  background?: BackgroundTask[];
}

export interface PeriodicTaskOptions {
  /** What it is, for the log line when a run fails. */
  name: string;
  /** How often it is looked at (SCHEDULER_INTERVAL). */
  intervalMs: number;
  /** A run is skipped until this long after the last one that succeeded. Default 0. */
  atMostEveryMs?: number;
  logger: Logger;
  run(): Promise<void>;
}

/**
 * Work repeated on a timer as a background task: runs never overlap, a failed run
 * is logged and tried again at the next tick, and stop waits for the run in flight.
 */
export function periodicTask(opts: PeriodicTaskOptions): BackgroundTask {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let lastDone = -Infinity;
  const tick = async () => {
    if (Date.now() - lastDone < (opts.atMostEveryMs ?? 0)) return;
    try {
      await opts.run();
      lastDone = Date.now();
    } catch (err) {
      opts.logger.error({ err, task: opts.name }, `${opts.name} failed; retried at the next interval`);
    }
  };
  return {
    start: async () => {
      timer = setInterval(() => {
        running = running.then(tick);
      }, opts.intervalMs);
    },
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}

/** Expired Idempotency-Key and consumer dedupe records are deleted about once an hour (a delete: replicas may overlap). */
const PURGE_EVERY_MS = 3_600_000;

/** A broker consumer as a background task. */
export function consumerTask(start: () => Promise<ConsumerHandle>): BackgroundTask {
  let handle: ConsumerHandle | undefined;
  return {
    start: async () => (handle = await start()),
    stop: async () => handle?.cancel(),
  };
}

/** A background task that failed to start (the store gone again meanwhile) is tried again after this, doubled up to the cap. */
const TASK_RETRY = { firstMs: 500, maxMs: 5000 };

export interface TaskStarter {
  /** Starts the tasks one after another, each tried again until it starts; true once all have, false when halted first. */
  start(): Promise<boolean>;
  /** Starts nothing more, cuts a wait between attempts short, and resolves once the attempt under way is over. */
  halt(): Promise<void>;
}

/** Starts a service's background tasks, a failed start tried again with capped backoff, and stops starting them at once on halt. */
export function taskStarter(
  tasks: BackgroundTask[],
  logger: Logger,
  retry: { firstMs: number; maxMs: number } = TASK_RETRY,
): TaskStarter {
  const halted = new AbortController();
  let running: Promise<boolean> = Promise.resolve(false);
  const run = async () => {
    for (const task of tasks) {
      for (let attempt = 0; ; attempt++) {
        if (halted.signal.aborted) return false;
        try {
          await task.start();
          break;
        } catch (err) {
          logger.error({ err, attempt }, 'a background task failed to start; tried again shortly');
          // Rejects (AbortError) when halted: the loop then ends.
          await delay(backoffDelayMs(attempt, retry), undefined, { signal: halted.signal }).catch(() => {});
        }
      }
    }
    return !halted.signal.aborted;
  };
  return {
    start: () => (running = run()),
    halt: async () => {
      halted.abort();
      await running;
    },
  };
}

/**
 * Starts the service whatever state its store and broker are in: it listens at once
 * (live; not ready while either is down, /health/ready names which), sets its store
 * up once it answers (retried with capped backoff), and only then starts the outbox
 * relay and the background tasks. Rejects on a configuration error (ConfigError)
 * or a failure that is not a dependency being down (runProcess logs and exits).
 */
export async function runService(def: ServiceDefinition): Promise<void> {
  const config = readServiceConfig(def.name);
  const logger = createLogger(def.name, config.logLevel);
  const telemetry = startTelemetry({ serviceName: def.name });
  startProcessMetrics(def.name);
  const store = await startStore({
    url: config.mongoUrl,
    dbName: `${config.dbPrefix}${def.name}`,
    entities: def.entities,
    retiredIndexes: def.retiredIndexes,
    logger,
    prepare: (db) => createOutboxIndexes(db, def.outboxCollections),
  });
  const db = store.db;
  const broker = Broker.open({
    url: config.amqpUrl,
    exchange: config.exchange,
    logger,
    connectionName: def.name,
    consumerRetryForMs: config.consumerRetryForMs,
  });
  // Kicks before it starts are remembered: its first pass drains them.
  const relay = new OutboxRelay({ db, collections: def.outboxCollections, publisher: timedPublisher(broker), logger });
  const parts = def.build({ config, logger, db, broker, relay });
  const { app } = parts;
  const background = [
    ...(parts.background ?? []),
    periodicTask({
      name: 'expired record purge',
      intervalMs: config.schedulerIntervalMs,
      atMostEveryMs: PURGE_EVERY_MS,
      logger,
      run: async () => {
        await purgeIdempotencyKeys(db);
        await purgeDedupeRecords(db, new Date(Date.now() - config.dedupeRetentionMs));
      },
    }),
  ];

  let stopping = false;
  let relayStarted = false;
  let started = false;
  const starter = taskStarter(background, logger);

  stopOnSignals(logger, async () => {
    stopping = true;
    await app.close();
    // The task start under way is waited for (a wait between its attempts cut short), then every task stopped.
    await starter.halt();
    for (const task of [...background].reverse()) await task.stop();
    if (relayStarted) await relay.stop();
    await broker.close();
    await store.close();
    await telemetry.shutdown();
  });

  probeRoutes(app, { ready: readiness(store, broker, () => started) });
  await app.listen({ port: config.port, host: config.host });

  // Closed before it answered (stopping): nothing more to start.
  if (!(await store.ready) || stopping) return;
  watchOutboxes(db, def.outboxCollections, relay.marks);
  watchQueues(() => broker.queueDepths());
  relay.start();
  relayStarted = true;
  started = await starter.start();
}

/**
 * What a service needs to take traffic: its store answers (and is set up), the broker
 * is connected, and its background work started with every consumer receiving.
 */
function readiness(store: Store, broker: Broker, started: () => boolean) {
  return {
    store: () => store.check(),
    broker: () => {
      if (!broker.isConnected()) throw new Error('not connected');
    },
    consumers: () => {
      if (!started()) throw new Error('not started: the background work starts once the store is set up');
      const detached = broker.detachedConsumers();
      if (detached.length) throw new Error(`not receiving: ${detached.join(', ')}`);
    },
  };
}
