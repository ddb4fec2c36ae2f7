import { createMailer } from '@lpm/shared/mailer';
import { closeRedis, createRedis } from '@lpm/shared/redis';
import { WorkQueue } from '@lpm/shared/messaging/work-queue';
import {
  consumerTask,
  runService,
  type BackgroundTask,
  type ServiceParts,
  type ServiceRuntime,
} from '@lpm/shared/service/runner';
import { runProcess } from '@lpm/shared/service/process';
import { readWebhooksConfig } from './config.ts';
import { userDirectory } from '@lpm/shared/service/neighbours';
import { CountersMigration } from './data/counters-migration.ts';
import { CountersRepository } from './data/counters-repository.ts';
import { DeliveriesRepository } from './data/deliveries-repository.ts';
import { RateReservations } from './data/rate-reservations.ts';
import { RecoveriesRepository } from './data/recoveries-repository.ts';
import { TeamVersions } from './data/team-versions.ts';
import { RETIRED_WEBHOOK_INDEXES, WEBHOOK_ENTITIES } from './data/webhook-entity.ts';
import { WebhooksRepository } from './data/webhooks-repository.ts';
import { Deactivation } from './domain/deactivation.ts';
import { HistoryRetention } from './domain/history-retention.ts';
import { ATTEMPT_JOB, Deliveries, attemptClaimMs, type AttemptJob } from './domain/deliveries.ts';
import { DeliveryLog } from './domain/delivery-log.ts';
import { KeyLimiter } from './domain/key-limiter.ts';
import { Recoveries } from './domain/recoveries.ts';
import { SecretBox } from './domain/secret-box.ts';
import { Webhooks } from './domain/webhooks.ts';
import { consumeAttemptJobs } from './consumers/attempt-jobs.ts';
import { consumeDomainEvents } from './consumers/domain-events.ts';
import { counterFoldTask } from './jobs/counter-fold.ts';
import { maintenanceTask } from './jobs/maintenance.ts';
import { retentionTask } from './jobs/retention.ts';
import { UrlGuard } from './upstream/url-guard.ts';
import { WebhookSender } from './upstream/webhook-sender.ts';
import { buildWebhooksApp } from './app.ts';
import { appRuntimeOptions } from '@lpm/shared/service/domain-app';

type Settings = ReturnType<typeof readWebhooksConfig>;

/** The stores, clients and domain objects of the delivery path. */
function deliveryPath(settings: Settings, { config, logger, db, broker }: ServiceRuntime) {
  const box = new SecretBox(settings.secretKey);
  const guard = new UrlGuard({ allowPrivate: settings.allowPrivateUrls, allowedPorts: settings.allowedPorts });
  const sender = new WebhookSender({
    guard,
    timeoutMs: settings.timeoutMs,
    connectionsPerOrigin: settings.concurrency,
  });
  const mailer = createMailer({ smtpUrl: settings.smtpUrl, from: settings.mailFrom, logger });
  const redis = createRedis(settings.redisUrl, 'lpm-webhooks-versions');
  const webhooksRepo = new WebhooksRepository(db, {
    versions: new TeamVersions(redis, settings.redisKeyPrefix, logger),
  });
  const countersRepo = new CountersRepository(db);
  const deliveriesRepo = new DeliveriesRepository(db, { attemptClaimMs: attemptClaimMs(settings.timeoutMs) });
  const owners = userDirectory(config);
  const deactivation = new Deactivation({ webhooks: webhooksRepo, counters: countersRepo, mailer, owners, logger });
  const attempts = new WorkQueue<AttemptJob>(broker, {
    queue: broker.queueName('webhooks.attempts'),
    type: ATTEMPT_JOB,
  });
  const deliveries = new Deliveries({
    webhooks: webhooksRepo,
    deliveries: deliveriesRepo,
    queue: attempts,
    sender,
    box,
    deactivation,
    limiter: new KeyLimiter(),
    perWebhook: Math.max(1, Math.floor(settings.concurrency / 16)),
    concurrency: settings.concurrency,
    retryDelaysMs: settings.retryDelaysMs,
    sendTimeoutMs: settings.timeoutMs,
    rates: new RateReservations(redis, settings.redisKeyPrefix),
  });
  const closing: BackgroundTask = {
    start: async () => {},
    stop: async () => Promise.all([sender.close(), mailer.close(), closeRedis(redis)]).then(() => {}),
  };
  return {
    box,
    guard,
    sender,
    webhooksRepo,
    countersRepo,
    deliveriesRepo,
    deactivation,
    attempts,
    deliveries,
    closing,
  };
}

function build(settings: Settings, rt: ServiceRuntime): ServiceParts {
  const { config, logger, db, broker } = rt;
  const path = deliveryPath(settings, rt);
  const { box, guard, sender, webhooksRepo, countersRepo, deliveriesRepo, deactivation, attempts, deliveries } = path;
  const webhooks = new Webhooks({
    webhooks: webhooksRepo,
    counters: countersRepo,
    deliveries: deliveriesRepo,
    guard,
    sender,
    box,
    logger,
  });
  const log = new DeliveryLog(deliveriesRepo, webhooks, deliveries);
  const recoveries = new Recoveries({
    recoveries: new RecoveriesRepository(db),
    webhooks,
    requeue: (d, id) => deliveries.retryNow(d, id),
    queueAgain: (d) => deliveries.queueRetry(d),
    logger,
  });
  const intervalMs = config.schedulerIntervalMs;
  return {
    app: buildWebhooksApp({ webhooks, log, recoveries, idempotencySealer: box, ...appRuntimeOptions(rt) }),
    background: [
      path.closing,
      // The attempts queue with its retry queue and DLQ first, then the fan-out that makes first attempts and
      // pushes the rest into it (a push declares the queue too: on a reconnect the consumers are set up again in any order).
      consumerTask(() => consumeAttemptJobs(attempts, deliveries, settings.concurrency)),
      consumerTask(() => consumeDomainEvents(broker, deliveries, settings.concurrency)),
      maintenanceTask({ deliveries, deactivation, recoveries, intervalMs, logger }),
      counterFoldTask({
        counters: countersRepo,
        migration: new CountersMigration(db, countersRepo),
        deactivation,
        logger,
      }),
      retentionTask({
        retention: new HistoryRetention({
          webhooks: webhooksRepo,
          deliveries: deliveriesRepo,
          counters: countersRepo,
          retentionMs: settings.historyRetentionMs,
        }),
        intervalMs,
        logger,
      }),
    ],
  };
}

// Started only as the process's entry point: importing it (scripts/warm-compile-cache.ts) starts nothing.
async function main(): Promise<void> {
  const settings = readWebhooksConfig();
  await runService({
    name: 'webhooks',
    entities: WEBHOOK_ENTITIES,
    retiredIndexes: RETIRED_WEBHOOK_INDEXES,
    outboxCollections: [],
    build: (rt) => build(settings, rt),
  });
}

if (import.meta.main) await runProcess('webhooks', main);
