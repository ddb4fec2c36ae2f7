import { createMailer } from '@lpm/shared/mailer';
import { consumerTask, runService, type BackgroundTask } from '@lpm/shared/service/runner';
import { UserDirectory } from '@lpm/shared/upstream/user-directory';
import { readWebhooksConfig } from './config.ts';
import { DeliveryLog } from './domain/delivery-log.ts';
import { SecretBox } from './domain/secret-box.ts';
import { WEBHOOK_ENTITIES } from './data/webhook-entity.ts';
import { Webhooks } from './domain/webhooks.ts';
import { Deactivation } from './delivery/deactivation.ts';
import { Deliveries } from './delivery/deliveries.ts';
import { KeyLimiter } from './delivery/key-limiter.ts';
import { maintenanceTask } from './delivery/maintenance.ts';
import { WebhookSender } from './delivery/sender.ts';
import { UrlGuard } from './delivery/url-guard.ts';
import { buildWebhooksApp } from './app.ts';

const settings = readWebhooksConfig();

await runService({
  name: 'webhooks',
  entities: WEBHOOK_ENTITIES,
  outboxCollections: [],
  build: ({ config, logger, orm, broker }) => {
    const db = orm.em.getConnection().getDb();
    const box = new SecretBox(settings.secretKey);
    const sender = new WebhookSender({ guard: new UrlGuard({ allowPrivate: settings.allowPrivateUrls }), timeoutMs: settings.timeoutMs });
    const mailer = createMailer({ smtpUrl: settings.smtpUrl, from: settings.mailFrom, logger });
    const deactivation = new Deactivation({ db, mailer, owners: new UserDirectory({ gatewayUrl: config.gatewayUrl, internalToken: config.internalToken }), logger });
    const deliveries = new Deliveries({
      db,
      broker,
      sender,
      box,
      deactivation,
      limiter: new KeyLimiter(),
      perWebhook: Math.max(1, Math.floor(settings.concurrency / 16)),
      retryDelaysMs: settings.retryDelaysMs,
      concurrency: settings.concurrency,
      logger,
    });
    const webhooks = new Webhooks({ db, guard: new UrlGuard({ allowPrivate: settings.allowPrivateUrls }), sender, box });
    const log = new DeliveryLog(db, webhooks, (d) => deliveries.retryNow(d));
    const closing: BackgroundTask = { start: async () => {}, stop: async () => Promise.all([sender.close(), mailer.close()]).then(() => {}) };
    return {
      app: buildWebhooksApp({ db, webhooks, log, internalToken: config.internalToken, loggerInstance: logger }),
      background: [
        closing,
        consumerTask(() => deliveries.consumeFanOut()),
        consumerTask(() => deliveries.consumeAttempts()),
        maintenanceTask({ deliveries, deactivation, intervalMs: config.schedulerIntervalMs, logger }),
      ],
    };
  },
});
