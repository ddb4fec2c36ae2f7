// The webhooks app in process on its own database, with the real URL guard and
// sender (outbound HTTPS to the test's receivers) and no delivery queue.
import { randomBytes } from 'node:crypto';
import type { Identity } from '@lpm/shared/identity';
import type { Logger } from '@lpm/shared/logger';
import { startServiceUnderTest, type ServiceUnderTest } from '@lpm/test-kit/service-under-test';
import { quietLogger } from '@lpm/test-kit/wait';
import { buildWebhooksApp } from '../src/app.ts';
import type { PortRange } from '../src/config.ts';
import { CountersRepository } from '../src/data/counters-repository.ts';
import { DeliveriesRepository } from '../src/data/deliveries-repository.ts';
import { RecoveriesRepository } from '../src/data/recoveries-repository.ts';
import { WEBHOOK_ENTITIES } from '../src/data/webhook-entity.ts';
import { WebhooksRepository } from '../src/data/webhooks-repository.ts';
import { attemptClaimMs } from '../src/domain/deliveries.ts';
import { DeliveryLog } from '../src/domain/delivery-log.ts';
import { Recoveries } from '../src/domain/recoveries.ts';
import { SecretBox } from '../src/domain/secret-box.ts';
import { Webhooks } from '../src/domain/webhooks.ts';
import { UrlGuard } from '../src/upstream/url-guard.ts';
import { WebhookSender } from '../src/upstream/webhook-sender.ts';

export type WebhooksUnderTest = ServiceUnderTest & {
  recoveries: Recoveries;
  /** The ids of the deliveries whose attempts a resumed recovery queued again, in order. */
  queuedAgain: string[];
};

export function startWebhooks(
  opts: {
    allowPrivateUrls?: boolean;
    allowedPorts?: PortRange[];
    timeoutMs?: number;
    logger?: Logger;
    recoverLimit?: number;
  } = {},
): Promise<WebhooksUnderTest> {
  return startServiceUnderTest({
    name: 'webhooks',
    entities: WEBHOOK_ENTITIES,
    build: async ({ db, internalToken }) => {
      const timeoutMs = opts.timeoutMs ?? 2000;
      const guard = new UrlGuard({
        allowPrivate: opts.allowPrivateUrls ?? false,
        ...(opts.allowedPorts ? { allowedPorts: opts.allowedPorts } : {}),
      });
      const sender = new WebhookSender({ guard, timeoutMs });
      const deliveries = new DeliveriesRepository(db, { attemptClaimMs: attemptClaimMs(timeoutMs) });
      const box = new SecretBox(randomBytes(32));
      const webhooks = new Webhooks({
        webhooks: new WebhooksRepository(db),
        counters: new CountersRepository(db),
        deliveries,
        guard,
        sender,
        box,
        logger: opts.logger ?? quietLogger,
      });
      const log = new DeliveryLog(deliveries, webhooks, {
        retryNow: async () => {},
        sendNew: (d) => deliveries.insert(d).then(() => {}),
      });
      // Re-queued deliveries are marked pending (with the recovery), not sent: no attempts queue here.
      const queuedAgain: string[] = [];
      const recoveries = new Recoveries({
        recoveries: new RecoveriesRepository(db),
        webhooks,
        requeue: (d, id) => deliveries.markPending(d._id, new Date(), id),
        queueAgain: async (d) => void queuedAgain.push(d._id),
        logger: quietLogger,
        ...(opts.recoverLimit && { maxPerCall: opts.recoverLimit }),
      });
      const app = buildWebhooksApp({
        db,
        webhooks,
        log,
        recoveries,
        internalToken,
        idempotencySealer: box,
        logger: false,
      });
      return {
        app,
        parts: { recoveries, queuedAgain },
        release: async () => (await recoveries.settled(), await sender.close()),
      };
    },
  });
}

/** Subscribes `url` to `events` through the routes, as `who`: the new webhook's id. */
export async function createWebhook(
  sut: ServiceUnderTest,
  who: Identity,
  url: string,
  events: string[],
): Promise<string> {
  const res = await sut.call(who, { method: 'POST', url: '/v1/webhooks', payload: { url, events } });
  expect(res.statusCode).toBe(201);
  return res.json().data.id;
}
