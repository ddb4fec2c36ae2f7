// A recovery across a crash: the webhooks service is killed (SIGKILL) while a
// recovery of 2,000 failed deliveries is re-queueing them, and started again; the
// recovery, left running in the store, is resumed by the new process's maintenance,
// completes with every delivery counted once, and each of them reaches the receiver.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { MongoClient } from 'mongodb';
import { defaultTeamSettings, identityHeaders, type Identity } from '@lpm/shared/identity';
import { newId } from '@lpm/shared/ids';
import { READY_PATH } from '@lpm/shared/http/health';
import { freePortBlock } from '@lpm/test-kit/ports';
import { startHttpsReceiver, type HttpsReceiver } from '@lpm/test-kit/https-receiver';
import { waitFor } from '@lpm/test-kit/wait';
import type { DeliveryRecord } from '../src/data/webhook-entity.ts';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const TOKEN = randomBytes(32).toString('hex');
const SECRET_KEY = randomBytes(32).toString('hex');
const FAILED = 2000;
const prefix = `${process.env.MONGO_DB_PREFIX}whrecover_`;
const team: Identity = {
  teamId: newId('team'),
  userId: newId('user'),
  scopes: ['read', 'write', 'admin'],
  settings: defaultTeamSettings(),
};

let port: number;
let service: ChildProcess | undefined;
let receiver: HttpsReceiver;
let store: MongoClient;

function startService(): ChildProcess {
  return spawn(process.execPath, ['services/webhooks/src/server.ts'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      PORT: String(port),
      MONGO_DB_PREFIX: prefix,
      AMQP_EXCHANGE: `${prefix}events`,
      REDIS_KEY_PREFIX: `${process.env.REDIS_KEY_PREFIX ?? ''}whrecover:`,
      INTERNAL_TOKEN: TOKEN,
      WEBHOOK_SECRET_KEY: SECRET_KEY,
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      SCHEDULER_INTERVAL: '1s',
      LOG_LEVEL: 'error',
    },
  });
}

const request = (method: string, path: string, body?: unknown) =>
  fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { ...identityHeaders(team, TOKEN), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as { data: Record<string, unknown> } }));

const isReady = () =>
  fetch(`http://127.0.0.1:${port}${READY_PATH}`, { signal: AbortSignal.timeout(2000) }).then(
    (r) => r.status === 200,
    () => false,
  );

const received = () =>
  new Set(
    receiver.requests
      .map((r) => JSON.parse(r.body))
      .filter((p) => p.type === 'client.created')
      .map((p) => p.id as string),
  );

beforeAll(async () => {
  port = await freePortBlock();
  receiver = await startHttpsReceiver();
  store = await MongoClient.connect(process.env.MONGO_URL!);
});

afterAll(async () => {
  if (service && service.exitCode === null) service.kill('SIGKILL');
  await receiver.close();
  await store.close();
});

test('when the service is killed while a recovery re-queues and started again, then the recovery resumes, completes, and every delivery reaches the receiver', async () => {
  service = startService();
  await waitFor('the webhooks service ready', isReady, 60_000);
  const hook = (await request('POST', '/v1/webhooks', { url: `${receiver.url}/recover`, events: ['client.created'] }))
    .body.data as { id: string };

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
    const d: DeliveryRecord = {
      _id: newId('dlv'),
      team_id: team.teamId,
      webhook_id: hook.id,
      event_id: eventId,
      event_type: 'client.created',
      body,
      status: 'failed',
      attempts_count: 6,
      last_attempt_at: at,
      next_attempt_at: null,
      created_at: at,
      updated_at: at,
    };
    return d;
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
  const exited = new Promise((done) => service!.once('exit', done));
  service.kill('SIGKILL');
  await exited;
  const before = await store
    .db(`${prefix}webhooks`)
    .collection('webhook_recoveries')
    .findOne({ _id: started.body.data.id as never });
  expect(before).toMatchObject({ status: 'running' });
  expect(before!.queued).toBeLessThan(FAILED);

  service = startService();
  await waitFor('the webhooks service ready again', isReady, 60_000);
  await waitFor('the recovery resumed and completed', async () => (await progress()).status === 'completed', 90_000);
  expect(await progress()).toMatchObject({ queued: FAILED, total: FAILED });
  await waitFor('every delivery sent again', () => received().size === FAILED, 120_000);
  expect([...received()].sort()).toEqual(failed.map((d) => d.event_id).sort());
}, 300_000);
