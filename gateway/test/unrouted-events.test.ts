// An event published before any queue is bound for it (a first deploy,
// a consumer's new binding) is confirmed by the broker; it must not be dropped. It
// waits in the exchange's parking queue, `dlq list` shows it and `dlq replay` hands
// it to the queues bound by then. Real RabbitMQ; the CLI through its commands and
// once as a process.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { newEvent, type DomainEvent } from '@lpm/shared/events';
import { parkingQueue } from '@lpm/shared/messaging/publisher';
import { scratchBroker, type ScratchBroker } from '@lpm/test-kit/scratch-broker';
import { waitFor } from '@lpm/test-kit/wait';
import { runCli } from '@lpm/test-kit/cli';
import { DLQ_COMMANDS } from '../src/cli/commands.ts';

const EXCHANGE = `${process.env.MONGO_DB_PREFIX}unrouted-test.events`;
const AMQP_URL = process.env.AMQP_URL!;
const PARKING = parkingQueue(EXCHANGE);

let s: ScratchBroker;

beforeAll(async () => {
  s = await scratchBroker(EXCHANGE);
  s.declared.add(PARKING);
});

afterAll(async () => {
  await s?.close();
});

const count = async (q: string) => (await s.ch.checkQueue(q)).messageCount;
/**
 * The messages a command read and gave back are ready again: a quorum queue takes back
 * those of a closed channel a moment after the command exits, not before it answers.
 */
const parkedAgain = (n: number) =>
  waitFor(`${n} messages ready again in ${PARKING}`, async () => (await count(PARKING)) === n);

it('when events are published before their consumer binds, then they are parked, listed, and replayed to the consumer bound since', async () => {
  const early = newEvent('matter.opened', 'team_1', { n: 1 }, null, 'user_1');
  const other = newEvent('matter.opened', 'team_1', { n: 2 }, null, 'user_1');
  await s.broker.publish(early);
  await s.broker.publish(other);
  expect(await count(PARKING)).toBe(2);

  const listed = await DLQ_COMMANDS['dlq list'].run(AMQP_URL, { queue: PARKING });
  expect(listed.json).toEqual({
    queue: EXCHANGE,
    dlq: PARKING,
    count: 2,
    messages: [early, other].map((e) => ({ id: e.id, type: 'matter.opened', attempt: null, last_error: null })),
  });
  await parkedAgain(2);

  // Nothing bound yet: the replay stops and leaves the event parked.
  const refused = await runCli({ AMQP_URL }, 'dlq', 'replay', '--queue', PARKING, '--json');
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain(`no queue is bound for matter.opened on ${EXCHANGE} yet; it stays in ${PARKING}`);
  await parkedAgain(2);

  const queue = s.broker.queueName('unrouted.matters');
  s.declared.add(queue).add(`${queue}.retry`).add(`${queue}.dlq`);
  for (const d of [1000, 5000, 30000, 120000, 600000]) s.declared.add(`${queue}.delay.${d}`);
  const handled: DomainEvent[] = [];
  const consumer = await s.broker.consume({
    queue,
    bindings: ['matter.opened'],
    handler: async (e) => void handled.push(e),
  });
  try {
    const replay = await runCli({ AMQP_URL }, 'dlq', 'replay', '--queue', PARKING, '--json');
    expect(replay.stderr).toBe('');
    expect(JSON.parse(replay.stdout)).toEqual({ queue: EXCHANGE, dlq: PARKING, replayed: 2 });
    await waitFor('the replayed events handled', () => handled.length === 2);
    expect(handled.map((e) => e.id)).toEqual([early.id, other.id]);
    expect(await count(PARKING)).toBe(0);

    // Once bound, an event goes to its queue and nothing is parked.
    await s.broker.publish(newEvent('matter.opened', 'team_1', { n: 3 }, null, 'user_1'));
    await waitFor('the bound event handled', () => handled.length === 3);
    expect(await count(PARKING)).toBe(0);
  } finally {
    await consumer.cancel();
  }
});
