// A poison message still goes to the DLQ, `dlq list` shows it without
// removing it and `dlq replay` moves it back into its queue. Real RabbitMQ; the CLI
// through its command functions and once as a process.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { connect as amqpConnect, type Channel, type ChannelModel } from 'amqplib';
import { Broker } from '@lpm/shared/messaging/broker';
import { newEvent, type DomainEvent } from '@lpm/shared/events';
import { runCli } from '@lpm/test-kit/cli';
import { DLQ_COMMANDS, resolveCommand } from '../src/cli/commands.ts';
import { dlqQueues } from '../src/cli/dlq.ts';

const EXCHANGE = 'dlq-cli-test.events';
const AMQP_URL = process.env.AMQP_URL!;
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

let broker: Broker;
let raw: ChannelModel;
let ch: Channel;
const declared: string[] = [];

beforeAll(async () => {
  broker = await Broker.connect({ url: AMQP_URL, exchange: EXCHANGE, logger: quiet });
  raw = await amqpConnect(AMQP_URL);
  ch = await raw.createChannel();
});

afterAll(async () => {
  await broker.close();
  for (const q of declared) await ch.deleteQueue(q);
  await ch.deleteExchange(EXCHANGE);
  await raw.close();
});

async function waitFor(what: string, cond: () => Promise<boolean> | boolean, timeoutMs = 20_000) {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const count = async (q: string) => (await ch.checkQueue(q)).messageCount;

const admin = (...args: string[]) => runCli({ AMQP_URL }, ...args);

it('names the DLQ of a queue, or takes a DLQ name as it is', () => {
  expect(dlqQueues('lpm.events.webhooks.fan-out')).toEqual({
    queue: 'lpm.events.webhooks.fan-out',
    dlq: 'lpm.events.webhooks.fan-out.dlq',
  });
  expect(dlqQueues('lpm.events.webhooks.fan-out.dlq')).toEqual({
    queue: 'lpm.events.webhooks.fan-out',
    dlq: 'lpm.events.webhooks.fan-out.dlq',
  });
  expect(() => resolveCommand(['dlq', 'list'], {})).toThrow('--queue is required');
});

it('when a message fails with a non-transient error maxAttempts times, then it is in the DLQ; dlq list shows it and dlq replay puts it back', async () => {
  const queue = broker.queueName('dlq-cli.poison');
  declared.push(
    queue,
    `${queue}.retry`,
    `${queue}.dlq`,
    ...[1000, 5000, 30000, 120000, 600000].map((d) => `${queue}.delay.${d}`),
  );
  let poisoned = true;
  const handled: DomainEvent[] = [];
  let calls = 0;
  const consumer = await broker.consume({
    queue,
    bindings: ['matter.poisoned'],
    maxAttempts: 3,
    retryDelayMs: 50,
    handler: async (event) => {
      calls++;
      if (poisoned) throw new Error(`${event.type} ${event.id} does not carry a matter`);
      handled.push(event);
    },
  });
  try {
    const e = newEvent('matter.poisoned', 'team_1', { x: 1 }, null, 'user_1');
    await broker.publish(e);
    await waitFor('dead-lettered', async () => (await count(`${queue}.dlq`)) === 1);
    expect(calls).toBe(3);

    const listed = await DLQ_COMMANDS['dlq list'].run(AMQP_URL, { queue });
    const expected = {
      queue,
      dlq: `${queue}.dlq`,
      count: 1,
      messages: [
        {
          id: e.id,
          type: 'matter.poisoned',
          attempt: 3,
          last_error: `matter.poisoned ${e.id} does not carry a matter`,
        },
      ],
    };
    expect(listed.json).toEqual(expected);
    // Listing removes nothing; the process prints the same single JSON object.
    const run = await admin('dlq', 'list', '--queue', `${queue}.dlq`, '--json');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual(expected);
    expect(await count(`${queue}.dlq`)).toBe(1);

    poisoned = false;
    const replay = await admin('dlq', 'replay', '--queue', queue, '--json');
    expect(replay.stderr).toBe('');
    expect(replay.code).toBe(0);
    expect(JSON.parse(replay.stdout)).toEqual({ queue, dlq: `${queue}.dlq`, replayed: 1 });
    await waitFor('replayed message handled', () => handled.length === 1);
    expect(handled[0].id).toBe(e.id);
    expect(await count(`${queue}.dlq`)).toBe(0);

    const empty = await DLQ_COMMANDS['dlq replay'].run(AMQP_URL, { queue });
    expect(empty.json).toEqual({ queue, dlq: `${queue}.dlq`, replayed: 0 });
  } finally {
    await consumer.cancel();
  }
});

it('when the queue does not exist, then dlq list fails with exit code 1 and says which', async () => {
  const run = await admin('dlq', 'list', '--queue', 'dlq-cli-test.nothing-here', '--json');
  expect(run.code).toBe(1);
  expect(run.stdout).toBe('');
  expect(run.stderr).toContain('queue dlq-cli-test.nothing-here.dlq does not exist');
});
