// A running system (test-kit/running-system) that may deliver to private addresses,
// and an HTTPS receiver for its webhooks on 127.0.0.1, around a suite's tests; and
// what the webhooks' system tests ask of such a system.
import { afterAll, beforeAll } from '@jest/globals';
import { MongoClient, type Collection } from 'mongodb';
import { startHttpsReceiver, type HttpsReceiver, type ReceiverHandler } from '@lpm/test-kit/https-receiver';
import { startRunningSystem, type RunningSystem, type SystemOptions } from '@lpm/test-kit/running-system';

export interface ReceivingSystem {
  sys: RunningSystem;
  receiver: HttpsReceiver;
}

/**
 * Before the suite's tests: the receiver (answering as `answer` says, 200 by
 * default) and the system `name` with `env` added, handed to `ready`; both closed
 * after them.
 */
export function receivingSystemForSuite(
  name: string,
  ready: (started: ReceivingSystem) => void,
  opts: { env?: NodeJS.ProcessEnv; options?: SystemOptions; answer?: ReceiverHandler; startMs?: number } = {},
): void {
  let started: Partial<ReceivingSystem> = {};
  beforeAll(async () => {
    const receiver = await startHttpsReceiver(opts.answer);
    started = { receiver };
    const sys = await startRunningSystem(name, { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', ...opts.env }, opts.options);
    started = { receiver, sys };
    ready({ receiver, sys });
  }, opts.startMs ?? 120_000);
  afterAll(async () => {
    await started.receiver?.close();
    await started.sys?.stop();
  });
}

/** The system's webhooks as stored, on a connection of their own that is closed once `use` is done. */
export async function withStoredWebhooks<T>(
  sys: RunningSystem,
  use: (webhooks: Collection<{ _id: string; [field: string]: unknown }>) => Promise<T>,
): Promise<T> {
  const client = await MongoClient.connect(process.env.MONGO_URL!);
  try {
    return await use(client.db(`${sys.env.MONGO_DB_PREFIX}webhooks`).collection('webhooks'));
  } finally {
    await client.close();
  }
}

/** Asks the system to attempt a delivery again, as the team whose key is `key`. */
export const retryDelivery = (sys: RunningSystem, key: string, webhookId: string, deliveryId: string) =>
  sys.call(key, 'POST', `/v1/webhooks/${webhookId}/deliveries/${deliveryId}/retry`);
