import { execFileSync } from 'node:child_process';
import { connect as amqpConnect, type Channel, type ChannelModel, type GetMessage } from 'amqplib';
import { Broker } from '../src/messaging/broker.ts';
import { DELIVERY_LIMIT } from '../src/messaging/queues.ts';
import { WorkQueue } from '../src/messaging/work-queue.ts';
import { newEvent, type DomainEvent } from '../src/events.ts';
import { scratchBroker, type ScratchBroker } from '@lpm/test-kit/scratch-broker';
import { waitFor } from '@lpm/test-kit/wait';

const EXCHANGE = 'quorum-test.events';

let scratch: ScratchBroker;
let broker: Broker;
let ch: Channel;
let declared: Set<string>;
let probes: ChannelModel;

// The default (shared/src/messaging/queues.ts), set here in case the run asks for classic.
const typeBefore = process.env.AMQP_QUEUE_TYPE;

beforeAll(async () => {
  process.env.AMQP_QUEUE_TYPE = 'quorum';
  scratch = await scratchBroker(EXCHANGE, 'quorum-test');
  ({ broker, ch, declared } = scratch);
  probes = await amqpConnect(process.env.AMQP_URL!);
});

afterAll(async () => {
  await probes.close();
  await scratch.close();
  if (typeBefore === undefined) delete process.env.AMQP_QUEUE_TYPE;
  else process.env.AMQP_QUEUE_TYPE = typeBefore;
});

/** Whether `queue` exists, asked on a channel of its own (a 404 closes the channel). */
async function exists(queue: string): Promise<boolean> {
  const probe = await probes.createChannel();
  probe.on('error', () => {});
  try {
    await probe.checkQueue(queue);
    await probe.close();
    return true;
  } catch {
    return false;
  }
}

/** The queue's type as the broker lists it (read only: rabbitmqctl list_queues of the run's vhost on the run's node). */
function isQuorum(queue: string): boolean {
  const node = process.env.LPM_TEST_RABBITMQ_NODE;
  const out = execFileSync(
    'rabbitmqctl',
    [
      ...(node ? ['-n', node] : []),
      ...['list_queues', '-p', process.env.AMQP_VHOST!, 'name', 'type', '--quiet', '--no-table-headers'],
    ],
    { encoding: 'utf8' },
  );
  return out.split('\n').some((line) => line.trim() === `${queue}\tquorum`);
}

const queuesOf = (queue: string, delays: number[]) => [
  queue,
  `${queue}.retry`,
  `${queue}.dlq`,
  ...delays.map((d) => `${queue}.delay.${d}`),
];

it('when a consumer starts, then its queue, retry, delay and dead-letter queues are all quorum queues', async () => {
  const queue = broker.queueName('all-quorum');
  const delays = [100, 200];
  for (const q of queuesOf(queue, delays)) declared.add(q);
  const consumer = await broker.consume({
    queue,
    bindings: ['quorum.all'],
    transientDelaysMs: delays,
    handler: async () => {},
  });
  await consumer.cancel();
  for (const q of queuesOf(queue, delays)) expect([q, isQuorum(q)]).toEqual([q, true]);
});

it('when an event no queue is bound for is published, then the unrouted parking queue it waits in is a quorum queue', async () => {
  declared.add(`${EXCHANGE}.unrouted`);
  await broker.publish(newEvent('quorum.nobody', 'team_1', {}));
  expect(isQuorum(`${EXCHANGE}.unrouted`)).toBe(true);
  expect((await ch.checkQueue(`${EXCHANGE}.unrouted`)).messageCount).toBe(1);
});

it('when a message is redelivered past the delivery limit without an ack, then the broker dead-letters it to the DLQ', async () => {
  const queue = broker.queueName('poison');
  const jobs = new WorkQueue<{ n: number }>(broker, { queue, type: 'quorum.poison' });
  declared.add(queue).add(`${queue}.dlq`);
  await jobs.push({ n: 1 });
  await ch.assertQueue(`${queue}.dlq`, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  // A consumer that dies with the message each time: the broker counts the returns, not the attempt header.
  for (let i = 0; i <= DELIVERY_LIMIT; i++) {
    const got = await ch.get(queue, { noAck: false });
    if (got === false) break;
    ch.nack(got, false, true);
  }
  await waitFor(
    'the poison message in the DLQ',
    async () => (await ch.checkQueue(`${queue}.dlq`)).messageCount === 1,
    5000,
  );
  expect((await ch.checkQueue(queue)).messageCount).toBe(0);
});

it('when classic queues holding messages meet a start of the new code, then they become quorum queues and every message is delivered', async () => {
  const queue = broker.queueName('migrated');
  const delay = 60_000;
  for (const q of queuesOf(queue, [delay])) declared.add(q);
  declared.add(`${queue}.moving`);
  // As an earlier deployment declared them: classic, the queue bound to the exchange.
  await ch.assertQueue(queue, { durable: true });
  await ch.bindQueue(queue, EXCHANGE, 'quorum.migrated');
  await ch.assertQueue(`${queue}.dlq`, { durable: true });
  await ch.assertQueue(`${queue}.delay.${delay}`, {
    durable: true,
    arguments: { 'x-message-ttl': delay, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': queue },
  });
  const waiting = Array.from({ length: 250 }, (_, n) => newEvent('quorum.migrated', 'team_1', { n }));
  for (const e of waiting) await broker.publish(e);
  const dead = newEvent('quorum.migrated', 'team_1', { dead: true });
  ch.sendToQueue(`${queue}.dlq`, Buffer.from(JSON.stringify(dead)), { persistent: true, messageId: dead.id });
  const later = newEvent('quorum.migrated', 'team_1', { later: true });
  ch.sendToQueue(`${queue}.delay.${delay}`, Buffer.from(JSON.stringify(later)), {
    persistent: true,
    messageId: later.id,
  });
  await waitFor(
    'the classic queue filled',
    async () => (await ch.checkQueue(queue)).messageCount === waiting.length,
    5000,
  );

  const got: DomainEvent[] = [];
  const consumer = await broker.consume({
    queue,
    bindings: ['quorum.migrated'],
    transientDelaysMs: [delay],
    handler: async (e) => void got.push(e),
  });
  const after = newEvent('quorum.migrated', 'team_1', { after: true });
  await broker.publish(after);
  await waitFor('every waiting message delivered', () => got.length === waiting.length + 1, 10_000);
  await consumer.cancel();

  expect(new Set(got.map((e) => e.id))).toEqual(new Set([...waiting, after].map((e) => e.id)));
  for (const q of queuesOf(queue, [delay])) expect([q, isQuorum(q)]).toEqual([q, true]);
  const kept: GetMessage[] = [];
  for (const q of [`${queue}.dlq`, `${queue}.delay.${delay}`]) {
    const m = await ch.get(q, { noAck: true });
    if (m) kept.push(m);
  }
  expect(kept.map((m) => m.properties.messageId)).toEqual([dead.id, later.id]);
  expect(await exists(`${queue}.moving`)).toBe(false);
});
