// The webhooks app in process on its own database, with the real URL guard and
// sender (outbound HTTPS to the test's receivers) and no delivery queue.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Db } from 'mongodb';
import { defaultTeamSettings, type Identity } from '@lpm/shared/identity';
import { newId } from '@lpm/shared/ids';
import type { Logger } from '@lpm/shared/logger';
import { openStore } from '@lpm/shared/store/orm';
import { callAs } from '@lpm/test-kit/api';
import { assertWholeAnswers, checkWholeAnswers } from '@lpm/test-kit/whole-answers';
import { quietLogger } from '@lpm/test-kit/wait';
import { buildWebhooksApp } from '../src/app.ts';
import { CountersRepository } from '../src/data/counters-repository.ts';
import { DeliveriesRepository } from '../src/data/deliveries-repository.ts';
import { WEBHOOK_ENTITIES } from '../src/data/webhook-entity.ts';
import { WebhooksRepository } from '../src/data/webhooks-repository.ts';
import type { PortRange } from '../src/config.ts';
import { attemptClaimMs } from '../src/domain/deliveries.ts';
import { DeliveryLog } from '../src/domain/delivery-log.ts';
import { SecretBox } from '../src/domain/secret-box.ts';
import { Webhooks } from '../src/domain/webhooks.ts';
import { UrlGuard } from '../src/upstream/url-guard.ts';
import { WebhookSender } from '../src/upstream/webhook-sender.ts';

export const INTERNAL_TOKEN = randomBytes(32).toString('hex');

export function identity(): Identity {
  return { teamId: newId('team'), userId: newId('user'), scopes: ['read', 'write', 'admin'], settings: defaultTeamSettings() };
}

export interface WebhooksUnderTest {
  app: FastifyInstance;
  db: Db;
  call(who: Identity, opts: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export async function startWebhooks(
  opts: { allowPrivateUrls?: boolean; allowedPorts?: PortRange[]; timeoutMs?: number; logger?: Logger } = {},
): Promise<WebhooksUnderTest> {
  const store = await openStore({
    url: process.env.MONGO_URL!,
    dbName: `${process.env.MONGO_DB_PREFIX}webhooks_${randomBytes(4).toString('hex')}`,
    entities: WEBHOOK_ENTITIES,
  });
  const timeoutMs = opts.timeoutMs ?? 2000;
  const guard = new UrlGuard({ allowPrivate: opts.allowPrivateUrls ?? false, ...(opts.allowedPorts ? { allowedPorts: opts.allowedPorts } : {}) });
  const sender = new WebhookSender({ guard, timeoutMs });
  const deliveries = new DeliveriesRepository(store.db, { attemptClaimMs: attemptClaimMs(timeoutMs) });
  const box = new SecretBox(randomBytes(32));
  const webhooks = new Webhooks({
    webhooks: new WebhooksRepository(store.db),
    counters: new CountersRepository(store.db),
    deliveries,
    guard,
    sender,
    box,
    logger: opts.logger ?? quietLogger,
  });
  const log = new DeliveryLog(deliveries, webhooks, async () => {});
  const app = buildWebhooksApp({ db: store.db, webhooks, log, internalToken: INTERNAL_TOKEN, idempotencySealer: box, logger: false });
  const answers = checkWholeAnswers(app);
  await app.ready();
  return {
    app,
    db: store.db,
    call: callAs(() => app, INTERNAL_TOKEN),
    close: async () => {
      await app.close();
      await sender.close();
      await store.db.dropDatabase();
      await store.close();
      assertWholeAnswers(answers);
    },
  };
}
