import { type Channel, type GetMessage } from 'amqplib';
import { ATTEMPT_HEADER, Broker, LAST_ERROR_HEADER, type DeliveryMeta } from '../src/messaging/broker.ts';
import { WorkQueue, type JobMessage } from '../src/messaging/work-queue.ts';
import { mainQueueArguments } from '../src/messaging/queues.ts';
import { newEvent } from '../src/events.ts';
import { isId } from '../src/ids.ts';
import { scratchBroker, type ScratchBroker } from '@lpm/test-kit/scratch-broker';
import { waitFor, sleep } from '@lpm/test-kit/wait';

const EXCHANGE = 'work-queue-test.events';

interface AttemptJob {
  delivery_id: string;
  webhook_id: string;
  attempt: number;
  manual?: boolean;
}

let scratch: ScratchBroker;
let broker: Broker;
let ch: Channel;
/** Every queue a test declares, deleted at the end. */
let declared: Set<string>;

beforeAll(async () => {
  scratch = await scratchBroker(EXCHANGE, 'work-queue-test');
  ({ broker, ch, declared } = scratch);
});

afterAll(async () => {
  await scratch.close();
});

const messageCount = async (queue: string) => (await ch.checkQueue(queue)).messageCount;

/** A work queue of attempt jobs on `<exchange>.<name>`; its queues are deleted after the run. */
function attempts(name: string): WorkQueue<AttemptJob> {
  const queue = broker.queueName(name);
  for (const q of [queue, `${queue}.retry`, `${queue}.dlq`]) declared.add(q);
  return new WorkQueue<AttemptJob>(broker, { queue, type: 'webhooks.attempt' });
}

interface Handled {
  job: AttemptJob;
  meta: DeliveryMeta;
  at: number;
}

it('when a typed job is pushed, then the handler gets the same payload as a first attempt', async () => {
  const jobs = attempts('plain');
  const handled: Handled[] = [];
  const consumer = await jobs.consume(async (job, meta) => void handled.push({ job, meta, at: Date.now() }));
  const job: AttemptJob = { delivery_id: 'dlv_1', webhook_id: 'wh_1', attempt: 2, manual: true };
  try {
    await jobs.push(job);
    await waitFor('the job', () => handled.length === 1, 5000);
    await waitFor('the queue drained', async () => (await messageCount(jobs.queue)) === 0, 5000);
  } finally {
    await consumer.cancel();
  }
  expect(consumer.queue).toBe(jobs.queue);
  expect(handled[0].job).toEqual(job);
  expect(handled[0].meta).toMatchObject({ queue: jobs.queue, routingKey: jobs.queue, attempt: 1, redelivered: false });
  expect(await messageCount(`${jobs.queue}.dlq`)).toBe(0);
});

it('when a job is pushed, then it travels as a job envelope with a job id, not as a domain event', async () => {
  const queue = broker.queueName('wire');
  declared.add(queue);
  await ch.assertQueue(queue, { durable: true, arguments: mainQueueArguments(queue) });
  const jobs = new WorkQueue<AttemptJob>(broker, { queue, type: 'webhooks.attempt' });
  const job: AttemptJob = { delivery_id: 'dlv_2', webhook_id: 'wh_2', attempt: 1 };
  const before = Date.now();
  await jobs.push(job);
  let got: GetMessage | false = false;
  await waitFor('the message', async () => (got = await ch.get(queue, { noAck: true })) !== false, 5000);
  const msg = got as GetMessage | false;
  if (!msg) throw new Error('no message');
  const body = JSON.parse(msg.content.toString()) as JobMessage<AttemptJob>;
  expect(Object.keys(body).sort()).toEqual(['created_at', 'id', 'job', 'type']);
  expect(body.job).toEqual(job);
  expect(body.type).toBe('webhooks.attempt');
  expect(isId('job', body.id)).toBe(true);
  expect(Date.parse(body.created_at)).toBeGreaterThanOrEqual(before - 1000);
  expect(msg.properties).toMatchObject({
    messageId: body.id,
    type: 'webhooks.attempt',
    contentType: 'application/json',
    deliveryMode: 2,
  });
  expect(msg.fields.routingKey).toBe(queue);
});

it('when a job is pushed before anyone consumes its queue, then the push declares the queue and the job waits there for the consumer', async () => {
  const jobs = attempts('early');
  const job: AttemptJob = { delivery_id: 'dlv_early', webhook_id: 'wh_1', attempt: 1 };
  await jobs.push(job);
  expect(await messageCount(jobs.queue)).toBe(1);
  const handled: AttemptJob[] = [];
  const consumer = await jobs.consume(async (j) => void handled.push(j));
  try {
    await waitFor('the early job', () => handled.length === 1, 5000);
  } finally {
    await consumer.cancel();
  }
  expect(handled).toEqual([job]);
});

it('when a job is pushed with a 1000 ms delay, then it arrives no sooner than the delay, after a job pushed at once', async () => {
  const jobs = attempts('delayed');
  declared.add(`${jobs.queue}.delay.1000`);
  const handled: Handled[] = [];
  const consumer = await jobs.consume(async (job, meta) => void handled.push({ job, meta, at: Date.now() }));
  const later: AttemptJob = { delivery_id: 'dlv_later', webhook_id: 'wh_1', attempt: 2 };
  const now: AttemptJob = { delivery_id: 'dlv_now', webhook_id: 'wh_1', attempt: 1 };
  try {
    const start = Date.now();
    await jobs.push(later, 1000);
    await jobs.push(now);
    await waitFor('both jobs', () => handled.length === 2, 5000);
    expect(handled.map((h) => h.job)).toEqual([now, later]);
    expect(handled[0].at - start).toBeLessThan(1000);
    expect(handled[1].at - start).toBeGreaterThanOrEqual(1000);
    expect(handled[1].at - start).toBeLessThan(3000);
    expect(handled[1].meta).toMatchObject({ queue: jobs.queue, routingKey: jobs.queue, attempt: 1 });
    expect(await messageCount(`${jobs.queue}.delay.1000`)).toBe(0);
  } finally {
    await consumer.cancel();
  }
});

it('when a job is pushed with a negative or fractional delay, then push rejects', async () => {
  const jobs = attempts('bad-delay');
  const job: AttemptJob = { delivery_id: 'dlv_x', webhook_id: 'wh_1', attempt: 1 };
  await expect(jobs.push(job, -1)).rejects.toThrow(RangeError);
  await expect(jobs.push(job, 1.5)).rejects.toThrow('delayMs must be a non-negative integer: 1.5');
});

it('when the handler keeps failing, then the job is retried up to maxAttempts and then dead-lettered into <queue>.dlq', async () => {
  const jobs = attempts('poison');
  const seen: Array<{ job: AttemptJob; attempt: number }> = [];
  const consumer = await jobs.consume(
    async (job, meta) => {
      seen.push({ job, attempt: meta.attempt });
      throw new Error(`receiver down (attempt ${meta.attempt})`);
    },
    { maxAttempts: 3, retryDelayMs: 50 },
  );
  const job: AttemptJob = { delivery_id: 'dlv_poison', webhook_id: 'wh_1', attempt: 1 };
  let dead: GetMessage | false = false;
  try {
    await jobs.push(job);
    await waitFor(
      'dead-lettered',
      async () => (dead = await ch.get(`${jobs.queue}.dlq`, { noAck: true })) !== false,
      10_000,
    );
    // Several retry delays' worth: a job still cycling would be handled again.
    await sleep(500);
  } finally {
    await consumer.cancel();
  }
  expect(seen).toEqual([1, 2, 3].map((attempt) => ({ job, attempt })));
  const msg = dead as GetMessage | false;
  if (!msg) throw new Error('no dead letter');
  const body = JSON.parse(msg.content.toString()) as JobMessage<AttemptJob>;
  expect(body.job).toEqual(job);
  expect(msg.properties.messageId).toBe(body.id);
  expect(msg.properties.headers).toMatchObject({
    [ATTEMPT_HEADER]: 3,
    [LAST_ERROR_HEADER]: 'receiver down (attempt 3)',
  });
  expect(await messageCount(jobs.queue)).toBe(0);
  expect(await messageCount(`${jobs.queue}.retry`)).toBe(0);
  expect(await messageCount(`${jobs.queue}.dlq`)).toBe(0);
});

it('when the queue holds a message that is not a job of its type, then it goes to the DLQ without reaching the handler', async () => {
  const jobs = attempts('foreign');
  let calls = 0;
  const consumer = await jobs.consume(async () => void calls++);
  // A job dressed up as a domain event, as queued before work queues existed.
  const event = newEvent('webhooks.attempt', 'team_1', { delivery_id: 'dlv_old', webhook_id: 'wh_1', attempt: 1 });
  const other = new WorkQueue<AttemptJob>(broker, { queue: jobs.queue, type: 'webhooks.other' });
  let dead: GetMessage[] = [];
  try {
    await broker.publishToQueue(event, jobs.queue);
    await other.push({ delivery_id: 'dlv_other', webhook_id: 'wh_1', attempt: 1 });
    await waitFor(
      'both dead-lettered',
      async () => {
        const m = await ch.get(`${jobs.queue}.dlq`, { noAck: true });
        if (m) dead = [...dead, m];
        return dead.length === 2;
      },
      5000,
    );
  } finally {
    await consumer.cancel();
  }
  expect(calls).toBe(0);
  const ids = dead.map((m) => String(m.properties.messageId));
  expect(ids).toContain(event.id);
  expect(ids.filter((id) => id !== event.id)).toEqual([expect.stringMatching(/^job_/)]);
  for (const m of dead)
    expect(String(m.properties.headers?.[LAST_ERROR_HEADER])).toMatch(/not a webhooks\.attempt job/);
  expect(await messageCount(jobs.queue)).toBe(0);
});
