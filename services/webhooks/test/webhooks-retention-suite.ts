// The surroundings of the counters' and retention's tests (webhooks-counters.test.ts,
// webhooks-retention.test.ts): the app in process on its own database, a receiver,
// the repositories on that database, and old records seeded through them. Bindings
// are exported live: retentionSuite() sets them.
import { DAY_MS } from '@lpm/shared/time';
import { startHttpsReceiver, type HttpsReceiver } from '@lpm/test-kit/https-receiver';
import { CountersRepository } from '../src/data/counters-repository.ts';
import { DeliveriesRepository } from '../src/data/deliveries-repository.ts';
import type { AttemptRecord, DeliveryRecord } from '../src/data/webhook-entity.ts';
import { WebhooksRepository } from '../src/data/webhooks-repository.ts';
import { identity } from '@lpm/test-kit/teams';
import { createWebhook, startWebhooks, type WebhooksUnderTest } from './helper.ts';
import { deliveryRecord } from './records.ts';

export const RETENTION_MS = 30 * DAY_MS;

export let sut: WebhooksUnderTest;
export let receiver: HttpsReceiver;
export let webhooks: WebhooksRepository;
export let deliveries: DeliveriesRepository;
export let counters: CountersRepository;

export type Who = ReturnType<typeof identity>;

export const createHook = (who: Who, path: string) =>
  createWebhook(sut, who, `${receiver.url}/${path}`, ['client.created']);

/** A new team, and a webhook of it (createHook). */
export async function newTeamHook(path: string): Promise<{ who: Who; id: string }> {
  const who = identity();
  return { who, id: await createHook(who, path) };
}

export async function listed(who: Who, id: string) {
  const res = await sut.call(who, { method: 'GET', url: '/v1/webhooks' });
  expect(res.statusCode).toBe(200);
  return res.json().data.find((w: { id: string }) => w.id === id);
}

/** A delivery of the webhook, created and last changed at `at`. */
export const deliveryOf = (teamId: string, webhookId: string, at = new Date()): DeliveryRecord =>
  deliveryRecord(teamId, webhookId, 'succeeded', at, {
    body: '{"data":{"object":{"cpf":"123.456.789-09","email":"ana@lpm.test"}}}',
  });

/** That delivery, stored. */
export async function seedDelivery(teamId: string, webhookId: string, at = new Date()): Promise<DeliveryRecord> {
  const delivery = deliveryOf(teamId, webhookId, at);
  expect(await deliveries.insert(delivery)).toBe('inserted');
  return delivery;
}

export const attemptOf = (d: DeliveryRecord, n: number, ok: boolean, at = new Date()): AttemptRecord => ({
  _id: `${d._id}:${n}`,
  team_id: d.team_id,
  webhook_id: d.webhook_id,
  delivery_id: d._id,
  attempt: n,
  at,
  ok,
  status_code: ok ? 200 : 500,
  latency_ms: 10,
  error_class: ok ? null : 'http_5xx',
  response_body: null,
});

/** The first attempt, at `at`, of a delivery of the webhook stored now; the attempt itself is not stored. */
export async function attemptOfNewDelivery(
  teamId: string,
  webhookId: string,
  ok: boolean,
  at = new Date(),
): Promise<AttemptRecord> {
  return attemptOf(await seedDelivery(teamId, webhookId), 1, ok, at);
}

/** An attempt stored and folded into its webhook's counters. */
export async function recordAndCount(a: AttemptRecord): Promise<void> {
  await deliveries.attempts.recordAttempt(a);
  await counters.fold();
}

export const countOf = (collection: string, filter: object) => sut.db.collection(collection).countDocuments(filter);

/** Around the file's tests: the app in process on a database of its own, and a receiver. */
export function retentionSuite(): void {
  beforeAll(async () => {
    sut = await startWebhooks({ allowPrivateUrls: true });
    receiver = await startHttpsReceiver(() => ({ status: 200 }));
    webhooks = new WebhooksRepository(sut.db);
    deliveries = new DeliveriesRepository(sut.db, { attemptClaimMs: 60_000 });
    counters = new CountersRepository(sut.db);
  });

  afterAll(async () => {
    await sut?.close();
    await receiver?.close();
  });
}
