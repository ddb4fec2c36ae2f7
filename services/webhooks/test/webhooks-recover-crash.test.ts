// A recovery across a crash: the webhooks service is killed (SIGKILL) while a
// recovery of 2,000 failed deliveries is re-queueing them, and started again; the
// recovery, left running in the store, is resumed by the new process's maintenance,
// completes with every delivery counted once, and each of them reaches the receiver.
// The attempts queued before the crash are purged with it: the worst a death between
// making a delivery pending and queueing its attempt can leave.
import amqp from 'amqplib';
import { MongoClient } from 'mongodb';
import { newId } from '@lpm/shared/ids';
import { waitFor } from '@lpm/test-kit/wait';
import type { DeliveryRecord } from '../src/data/webhook-entity.ts';
import { webhooksProcessForSuite } from './webhooks-process.ts';
import { deliveryRecord } from './records.ts';

const FAILED = 2000;
const prefix = `${process.env.MONGO_DB_PREFIX}whrecover_`;
const webhooks = webhooksProcessForSuite(prefix, {
  REDIS_KEY_PREFIX: `${process.env.REDIS_KEY_PREFIX ?? ''}whrecover:`,
  SCHEDULER_INTERVAL: '1s',
  LOG_LEVEL: 'error',
});
const { team, request } = webhooks;
const received = () => webhooks.receivedIds('client.created');
let store: MongoClient;

beforeAll(async () => {
  store = await MongoClient.connect(process.env.MONGO_URL!);
});

afterAll(async () => {
  await store.close();
});

test('when the service is killed while a recovery re-queues and started again, then the recovery resumes, completes, and every delivery reaches the receiver', async () => {
  await webhooks.start();
  const hook = (
    await request('POST', '/v1/webhooks', { url: `${webhooks.receiver.url}/recover`, events: ['client.created'] })
  ).body.data as { id: string };

  // Deliveries that failed for good, stored as the service stores them.
  const base = Date.now() - 60 * 60_000;
  const failed: DeliveryRecord[] = Array.from({ length: FAILED }, (_, i) => {
    const at = new Date(base + i * 1000);
    const eventId = newId('evt');
    const data = { object: { n: i }, previous_attributes: null };
    const body = JSON.stringify({
      id: eventId,
      type: 'client.created',
      api_version: 'v1',
      created_at: at.toISOString(),
      data,
      team_id: team.teamId,
      webhook_id: hook.id,
    });
    return deliveryRecord(team.teamId, hook.id, 'failed', at, { event_id: eventId, body, attempts_count: 6 });
  });
  const deliveries = store.db(`${prefix}webhooks`).collection<DeliveryRecord>('deliveries');
  await deliveries.insertMany(failed);

  const started = await request('POST', `/v1/webhooks/${hook.id}/recover`, {
    since: new Date(base - 1000).toISOString(),
  });
  expect(started.status).toBe(202);
  expect(started.body.data).toMatchObject({ status: 'running', total: FAILED });
  const progress = async () =>
    (await request('GET', `/v1/webhooks/${hook.id}/recoveries/${String(started.body.data.id)}`)).body.data;
  await waitFor('a page re-queued', async () => Number((await progress()).queued) > 0, 60_000);
  await webhooks.kill();
  const before = await store
    .db(`${prefix}webhooks`)
    .collection('webhook_recoveries')
    .findOne({ _id: started.body.data.id as never });
  expect(before).toMatchObject({ status: 'running' });
  expect(before!.queued).toBeLessThan(FAILED);
  await purgeQueue(`${webhooks.exchange}.webhooks.attempts`);

  await webhooks.start('the webhooks service ready again');
  await waitFor('the recovery resumed and completed', async () => (await progress()).status === 'completed', 180_000);
  expect(await progress()).toMatchObject({ queued: FAILED, total: FAILED });
  await waitFor('every delivery sent again', () => received().size === FAILED, 120_000);
  expect([...received()].sort()).toEqual(failed.map((d) => d.event_id).sort());
}, 420_000);

async function purgeQueue(queue: string): Promise<void> {
  const conn = await amqp.connect(process.env.AMQP_URL!);
  try {
    const channel = await conn.createChannel();
    await channel.purgeQueue(queue);
  } finally {
    await conn.close();
  }
}
