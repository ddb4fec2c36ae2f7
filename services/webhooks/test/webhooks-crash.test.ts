// At-least-once across a crash: the webhooks service is killed (SIGKILL) in the
// middle of a burst of 1,000 events and started again; every event reaches the
// receiver, a first attempt the kill cut off between its delivery's insert and its
// POST once the delivery's claim (first_claim_until) has run out. Events are
// published straight to the exchange, as the domain services' relays do.
import amqp from 'amqplib';
import { newEvent } from '@lpm/shared/events';
import { newId } from '@lpm/shared/ids';
import { waitFor } from '@lpm/test-kit/wait';
import { webhooksProcessForSuite } from './webhooks-process.ts';

const BURST = 1000;
const webhooks = webhooksProcessForSuite(`${process.env.MONGO_DB_PREFIX}whcrash_`, { LOG_LEVEL: 'warn' });
const { team, exchange } = webhooks;
const distinctEvents = () => webhooks.receivedIds('client.created');

test('when the service is killed in the middle of a burst of 1,000 events and started again, then every event is delivered at least once', async () => {
  // Ready, not just listening: a process listens at once and binds its queues once its store is set up, and this
  // test publishes straight to the exchange, without the relay's parking of events no queue is bound for yet.
  await webhooks.start();
  const created = await webhooks.request('POST', '/v1/webhooks', {
    url: `${webhooks.receiver.url}/burst`,
    events: ['client.created'],
  });
  expect(created.status).toBe(201);

  const conn = await amqp.connect(process.env.AMQP_URL!);
  const ch = await conn.createConfirmChannel();
  await ch.assertExchange(exchange, 'topic', { durable: true });
  const ids: string[] = [];
  for (let i = 0; i < BURST; i++) {
    const event = newEvent(
      'client.created',
      team.teamId,
      { id: newId('cli'), name: `Cliente ${i}` },
      null,
      team.userId,
    );
    ids.push(event.id);
    ch.publish(exchange, event.type, Buffer.from(JSON.stringify(event)), {
      persistent: true,
      messageId: event.id,
      contentType: 'application/json',
    });
  }
  await ch.waitForConfirms();
  await conn.close();

  await waitFor('some deliveries before the crash', () => distinctEvents().size >= 100, 60_000);
  await webhooks.kill();
  const beforeRestart = distinctEvents().size;
  expect(beforeRestart).toBeLessThan(BURST);

  await webhooks.start('the webhooks service ready again');
  await waitFor('every event delivered', () => distinctEvents().size === BURST, 120_000);
  expect([...distinctEvents()].sort()).toEqual([...ids].sort());
}, 240_000);
