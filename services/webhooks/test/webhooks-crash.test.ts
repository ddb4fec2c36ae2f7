// At-least-once across a crash: the webhooks service is killed (SIGKILL) in the
// middle of a burst of 1,000 events and started again; every event reaches the
// receiver, a first attempt the kill cut off between its delivery's insert and its
// POST once the delivery's claim (first_claim_until) has run out. Events are
// published straight to the exchange, as the domain services' relays do.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import amqp from 'amqplib';
import { defaultTeamSettings, identityHeaders, type Identity } from '@lpm/shared/identity';
import { newEvent } from '@lpm/shared/events';
import { newId } from '@lpm/shared/ids';
import { READY_PATH } from '@lpm/shared/http/health';
import { freePortBlock } from '@lpm/test-kit/ports';
import { startHttpsReceiver, type HttpsReceiver } from '@lpm/test-kit/https-receiver';
import { waitFor } from '@lpm/test-kit/wait';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const TOKEN = randomBytes(32).toString('hex');
// The same key across the restart: the service must open the secrets it sealed.
const SECRET_KEY = randomBytes(32).toString('hex');
const BURST = 1000;
const prefix = `${process.env.MONGO_DB_PREFIX}whcrash_`;
const exchange = `${prefix}events`;
const team: Identity = {
  teamId: newId('team'),
  userId: newId('user'),
  scopes: ['read', 'write', 'admin'],
  settings: defaultTeamSettings(),
};

let port: number;
let service: ChildProcess | undefined;
let receiver: HttpsReceiver;

function startService(): ChildProcess {
  return spawn(process.execPath, ['services/webhooks/src/server.ts'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      PORT: String(port),
      MONGO_DB_PREFIX: prefix,
      AMQP_EXCHANGE: exchange,
      INTERNAL_TOKEN: TOKEN,
      WEBHOOK_SECRET_KEY: SECRET_KEY,
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      LOG_LEVEL: 'warn',
    },
  });
}

const distinctEvents = () =>
  new Set(
    receiver.requests
      .map((r) => JSON.parse(r.body))
      .filter((p) => p.type === 'client.created')
      .map((p) => p.id),
  );

beforeAll(async () => {
  port = await freePortBlock();
  receiver = await startHttpsReceiver();
});

afterAll(async () => {
  if (service && service.exitCode === null) service.kill('SIGKILL');
  await receiver.close();
});

test('when the service is killed in the middle of a burst of 1,000 events and started again, then every event is delivered at least once', async () => {
  service = startService();
  // Ready, not just listening: a process listens at once and binds its queues once its store is set up, and this
  // test publishes straight to the exchange, without the relay's parking of events no queue is bound for yet.
  await waitFor('the webhooks service ready', () => isReady(port), 60_000);
  const created = await fetch(`http://127.0.0.1:${port}/v1/webhooks`, {
    method: 'POST',
    headers: { ...identityHeaders(team, TOKEN), 'content-type': 'application/json' },
    body: JSON.stringify({ url: `${receiver.url}/burst`, events: ['client.created'] }),
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
  const exited = new Promise((done) => service!.once('exit', done));
  service.kill('SIGKILL');
  await exited;
  const beforeRestart = distinctEvents().size;
  expect(beforeRestart).toBeLessThan(BURST);

  service = startService();
  await waitFor('every event delivered', () => distinctEvents().size === BURST, 120_000);
  expect([...distinctEvents()].sort()).toEqual([...ids].sort());
}, 240_000);

const isReady = (servicePort: number) =>
  fetch(`http://127.0.0.1:${servicePort}${READY_PATH}`, { signal: AbortSignal.timeout(2000) }).then(
    (r) => r.status === 200,
    () => false,
  );
