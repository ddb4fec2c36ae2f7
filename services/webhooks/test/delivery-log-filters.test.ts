// The delivery log narrowed by status, event type or event id (what the webhooks
// portal filters by): only the matching deliveries, with the true total, and a bad
// status is 400. On the real store, through the routes.
import { expectError } from '@lpm/test-kit/api';
import { startHttpsReceiver, type HttpsReceiver } from '@lpm/test-kit/https-receiver';
import { identity } from '@lpm/test-kit/teams';
import { DeliveriesRepository } from '../src/data/deliveries-repository.ts';
import type { DeliveryRecord } from '../src/data/webhook-entity.ts';
import { createWebhook, startWebhooks, type WebhooksUnderTest } from './helper.ts';
import { deliveryRecord } from './records.ts';

let sut: WebhooksUnderTest;
let receiver: HttpsReceiver;
let deliveries: DeliveriesRepository;

beforeAll(async () => {
  receiver = await startHttpsReceiver();
  sut = await startWebhooks({ allowPrivateUrls: true });
  deliveries = new DeliveriesRepository(sut.db, { attemptClaimMs: 60_000 });
});

afterAll(async () => {
  await sut?.close();
  await receiver?.close();
});

type Who = ReturnType<typeof identity>;

const createHook = (who: Who, path = 'filters') => createWebhook(sut, who, `${receiver.url}/${path}`, ['*']);

async function seed(
  who: Who,
  webhookId: string,
  eventType: string,
  status: DeliveryRecord['status'],
  at: Date,
): Promise<DeliveryRecord> {
  const d = deliveryRecord(who.teamId, webhookId, status, at, { event_type: eventType });
  expect(await deliveries.insert(d)).toBe('inserted');
  return d;
}

const page = async (who: Who, id: string, query: string) => {
  const res = await sut.call(who, { method: 'GET', url: `/v1/webhooks/${id}/deliveries?${query}` });
  expect(res.statusCode).toBe(200);
  const body = res.json();
  return { ids: body.data.map((d: { id: string }) => d.id) as string[], total: body.pagination.total as number };
};

test('when the log is narrowed by status, event type, both, or event id, then only the matching deliveries are listed, newest first, with their total', async () => {
  const who = identity();
  const id = await createHook(who);
  const other = await createHook(who, 'other');
  const t0 = Date.now() - 60_000;
  const failedClient = await seed(who, id, 'client.created', 'failed', new Date(t0));
  const okClient = await seed(who, id, 'client.created', 'succeeded', new Date(t0 + 1000));
  const failedCase = await seed(who, id, 'case.created', 'failed', new Date(t0 + 2000));
  const failedLater = await seed(who, id, 'client.created', 'failed', new Date(t0 + 3000));
  await seed(who, other, 'client.created', 'failed', new Date(t0 + 4000));

  expect(await page(who, id, 'status=failed')).toEqual({
    ids: [failedLater._id, failedCase._id, failedClient._id],
    total: 3,
  });
  expect(await page(who, id, 'event_type=client.created')).toEqual({
    ids: [failedLater._id, okClient._id, failedClient._id],
    total: 3,
  });
  expect(await page(who, id, 'status=failed&event_type=client.created&limit=1&page=2')).toEqual({
    ids: [failedClient._id],
    total: 2,
  });
  expect(await page(who, id, `event_id=${okClient.event_id}`)).toEqual({ ids: [okClient._id], total: 1 });
  expect(await page(who, id, 'status=skipped')).toEqual({ ids: [], total: 0 });
});

test("when another team's webhook is asked with a filter, then 404; an unknown status is 400", async () => {
  const who = identity();
  const id = await createHook(who);
  const res = await sut.call(identity(), { method: 'GET', url: `/v1/webhooks/${id}/deliveries?status=failed` });
  expectError(res, 404, 'NOT_FOUND', 'Webhook not found');
  expectError(
    await sut.call(who, { method: 'GET', url: `/v1/webhooks/${id}/deliveries?status=lost` }),
    400,
    'VALIDATION_ERROR',
    'Invalid status',
  );
});
