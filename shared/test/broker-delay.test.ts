import { type Channel, type ConsumeMessage } from 'amqplib';
import { Broker, type DeliveryMeta } from '../src/messaging/broker.ts';
import { newEvent, type DomainEvent } from '../src/events.ts';
import { brokerBehindProxy } from '@lpm/test-kit/broker-behind-proxy';
import { scratchBroker, type ScratchBroker } from '@lpm/test-kit/scratch-broker';
import { waitFor } from '@lpm/test-kit/wait';

const EXCHANGE = 'broker-delay-test.events';

let scratch: ScratchBroker;
let broker: Broker;
let ch: Channel;
/** Every queue a test declares, deleted at the end. */
let declared: Set<string>;

beforeAll(async () => {
  scratch = await scratchBroker(EXCHANGE);
  ({ broker, ch, declared } = scratch);
});

afterAll(async () => {
  await scratch.close();
});

interface Arrival {
  event: DomainEvent;
  meta: DeliveryMeta;
  at: number;
}

/** Consumes `<exchange>.<name>` (no bindings: only what is put straight into it) through the Broker. */
async function consumed(name: string, via = broker): Promise<{ queue: string; got: Arrival[] }> {
  const queue = broker.queueName(name);
  const got: Arrival[] = [];
  await via.consume({
    queue,
    bindings: [],
    handler: async (event, meta) => void got.push({ event, meta, at: Date.now() }),
  });
  for (const q of [queue, `${queue}.retry`, `${queue}.dlq`]) declared.add(q);
  return { queue, got };
}

it('when an event is published with a 1000 ms delay, then the consumer of the queue gets it after 1 to 3 s, with its id and as a first attempt', async () => {
  const { queue, got } = await consumed('one-tier');
  declared.add(`${queue}.delay.1000`);
  const e = newEvent('webhooks.attempt', 'team_1', { delivery_id: 'dlv_1', attempt: 2 });
  const start = Date.now();
  await broker.publishDelayed(e, queue, 1000);
  await waitFor('the delayed event', () => got.length === 1, 5000);
  const waited = got[0].at - start;
  expect(waited).toBeGreaterThanOrEqual(1000);
  expect(waited).toBeLessThan(3000);
  expect(got[0].event).toEqual(e);
  expect(got[0].meta).toMatchObject({ queue, routingKey: queue, attempt: 1 });
  expect((await ch.checkQueue(`${queue}.delay.1000`)).messageCount).toBe(0);
});

it('when two tiers are published together, the longer first, then they arrive in tier order, each after its own delay', async () => {
  const { queue, got } = await consumed('two-tiers');
  for (const ms of [300, 1200]) declared.add(`${queue}.delay.${ms}`);
  const slow = newEvent('webhooks.attempt', 'team_1', { tier: 1200 });
  const fast = newEvent('webhooks.attempt', 'team_1', { tier: 300 });
  const start = Date.now();
  await Promise.all([broker.publishDelayed(slow, queue, 1200), broker.publishDelayed(fast, queue, 300)]);
  await waitFor('both tiers', () => got.length === 2, 5000);
  expect(got.map((a) => a.event.id)).toEqual([fast.id, slow.id]);
  expect(got[0].at - start).toBeGreaterThanOrEqual(300);
  expect(got[0].at - start).toBeLessThan(1200);
  expect(got[1].at - start).toBeGreaterThanOrEqual(1200);
});

it('when published to a queue or with a delay, then the message keeps the properties publish gives it', async () => {
  const queue = 'broker-delay-test.raw';
  declared.add(queue).add(`${queue}.delay.200`);
  await ch.assertQueue(queue, { durable: true });
  const seen: ConsumeMessage[] = [];
  const { consumerTag } = await ch.consume(queue, (m) => void (m && seen.push(m)), { noAck: true });
  try {
    const now = newEvent('webhooks.attempt', 'team_1', { n: 1 });
    const later = newEvent('webhooks.attempt', 'team_1', { n: 2 });
    const start = Date.now();
    await broker.publishToQueue(now, queue);
    await waitFor('the message put straight into the queue', () => seen.length === 1, 5000);
    expect(Date.now() - start).toBeLessThan(500);
    await broker.publishDelayed(later, queue, 200);
    await waitFor('the delayed message', () => seen.length === 2, 5000);
    for (const [m, e] of [
      [seen[0], now],
      [seen[1], later],
    ] as const) {
      expect(JSON.parse(m.content.toString())).toEqual(e);
      expect(m.properties).toMatchObject({
        messageId: e.id,
        type: e.type,
        contentType: 'application/json',
        deliveryMode: 2,
      });
      expect(m.properties.timestamp).toBe(Math.floor(Date.parse(e.created_at) / 1000));
    }
    expect(seen.map((m) => m.fields.routingKey)).toEqual([queue, queue]);
  } finally {
    await ch.cancel(consumerTag);
  }
});

it('when the connection was lost meanwhile, then publishDelayed rejects while down and declares its delay queue again once reconnected', async () => {
  const behind = await brokerBehindProxy(EXCHANGE, { reconnectMinMs: 20, reconnectMaxMs: 100 });
  const { proxy, broker: viaProxy } = behind;
  try {
    const { queue, got } = await consumed('reconnect', viaProxy);
    const delayQueue = `${queue}.delay.100`;
    declared.add(delayQueue);
    await viaProxy.publishDelayed(newEvent('webhooks.attempt', 'team_1', { n: 1 }), queue, 100);
    await waitFor('the first delayed event', () => got.length === 1, 5000);

    proxy.cut();
    await waitFor('disconnected', () => !viaProxy.isConnected());
    const down = newEvent('webhooks.attempt', 'team_1', { n: 2 });
    const err = (await viaProxy.publishDelayed(down, queue, 100).catch((x: unknown) => x)) as Error;
    expect(err.message).toBe(`publish of ${down.type} ${down.id} to ${delayQueue} failed`);
    expect((err.cause as Error).message).toBe('broker not connected');
    // Gone while disconnected: a broker that remembered it across connections would publish into nothing.
    await ch.deleteQueue(delayQueue);

    proxy.restore();
    await viaProxy.waitForConnection(10_000);
    const after = newEvent('webhooks.attempt', 'team_1', { n: 3 });
    await viaProxy.publishDelayed(after, queue, 100);
    // The first event may come again too: its ack can be lost with the connection (at least once).
    await waitFor('the delayed event after the reconnect', () => got.some((g) => g.event.id === after.id), 5000);
    expect(got.map((g) => g.event.id)).not.toContain(down.id);
  } finally {
    await behind.close();
  }
});

it('when the delay is not a non-negative integer, then publishDelayed throws before declaring anything', async () => {
  const e = newEvent('webhooks.attempt', 'team_1', {});
  await expect(broker.publishDelayed(e, broker.queueName('never'), -1)).rejects.toThrow(RangeError);
  await expect(broker.publishDelayed(e, broker.queueName('never'), 1.5)).rejects.toThrow(
    'delayMs must be a non-negative integer: 1.5',
  );
});

it('when a message is published into a queue that does not exist, then the publish rejects (returned, not dropped) and the broker goes on', async () => {
  const queue = broker.queueName('nowhere');
  const e = newEvent('webhooks.attempt', 'team_1', { n: 1 });
  const err = (await broker.publishToQueue(e, queue).catch((x: unknown) => x)) as Error;
  expect(err).toBeInstanceOf(Error);
  expect(err.message).toBe(`publish of ${e.type} ${e.id} to ${queue} failed`);
  expect((err.cause as Error).message).toMatch(/^message returned by the broker: 312 NO_ROUTE/);
  // The publish channel is still up: a queue that exists takes the next message.
  const there = broker.queueName('there');
  declared.add(there);
  await ch.assertQueue(there, { durable: true });
  await broker.publishToQueue(newEvent('webhooks.attempt', 'team_1', { n: 2 }), there);
  expect((await ch.checkQueue(there)).messageCount).toBe(1);
  expect(broker.isConnected()).toBe(true);
});

it('when a delayed message is published for a queue, then its delay queue is declared first and the publish is confirmed', async () => {
  const queue = broker.queueName('declared-late');
  declared.add(queue).add(`${queue}.delay.60000`);
  await broker.declareQueue(queue);
  await broker.publishDelayed(newEvent('webhooks.attempt', 'team_1', {}), queue, 60_000);
  expect((await ch.checkQueue(`${queue}.delay.60000`)).messageCount).toBe(1);
});

it('when a domain event is published with no queue bound for its type, then the publish still succeeds (an event nobody subscribes to is legal)', async () => {
  await expect(broker.publish(newEvent('deal.nobody-listens', 'team_1', {}))).resolves.toBeUndefined();
});
