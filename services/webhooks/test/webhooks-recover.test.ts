// Recover since a time, in process on the real store: the window's deliveries that
// failed for good or were skipped are re-queued oldest first, at most the call's
// limit, test sends and other webhooks' aside; the window is validated; one recovery
// of a webhook at a time across two instances (replicas) of the service's recoveries;
// and a recovery a dead process left running is resumed from where it got to, its
// count including what the dead one re-queued. Re-queueing here marks the delivery
// pending with its recovery (the sending is webhooks-recover-system's).
import { newId } from '@lpm/shared/ids';
import { expectError } from '@lpm/test-kit/api';
import { identity } from '@lpm/test-kit/teams';
import { quietLogger, waitFor } from '@lpm/test-kit/wait';
import { RecoveriesRepository } from '../src/data/recoveries-repository.ts';
import type { DeliveryRecord, WebhookRecord, WebhookRecoveryRecord } from '../src/data/webhook-entity.ts';
import { Recoveries } from '../src/domain/recoveries.ts';
import { startWebhooks, type WebhooksUnderTest } from './helper.ts';
import { deliveryRecord, webhookRecord } from './records.ts';

const LIMIT = 5;
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

let sut: WebhooksUnderTest;
const who = identity();
const call = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
  sut.call(who, { method, url, payload: payload as never });

beforeAll(async () => {
  sut = await startWebhooks({ recoverLimit: LIMIT });
});

afterAll(async () => {
  await sut?.close();
});

const deliveries = () => sut.db.collection<DeliveryRecord>('deliveries');

async function newHook(active = true): Promise<string> {
  const hook = webhookRecord(who.teamId, `https://example.com/${newId('wh')}`, { active });
  await sut.db.collection<WebhookRecord>('webhooks').insertOne(hook);
  return hook._id;
}

/** Stores a delivery of the webhook made `agoMs` ago, in `status`. */
async function stored(
  webhookId: string,
  agoMs: number,
  status: DeliveryRecord['status'],
  extra: Partial<DeliveryRecord> = {},
) {
  const at = new Date(Date.now() - agoMs);
  const d = deliveryRecord(who.teamId, webhookId, status, at, {
    attempts_count: status === 'skipped' ? 0 : 6,
    last_attempt_at: null,
    next_attempt_at: null,
    ...extra,
  });
  await deliveries().insertOne(d);
  return d;
}

const statusOf = async (d: DeliveryRecord) => (await deliveries().findOne({ _id: d._id }))!;

async function finished(webhookId: string, id: string): Promise<Record<string, unknown>> {
  let shown: Record<string, unknown> = {};
  await waitFor('the recovery completed', async () => {
    shown = (await call('GET', `/v1/webhooks/${webhookId}/recoveries/${id}`)).json().data;
    return shown.status === 'completed';
  });
  return shown;
}

test('when a webhook is recovered since a time, then its failed and skipped deliveries of the window are re-queued oldest first, at most the limit, and the progress shows it', async () => {
  const hook = await newHook();
  const other = await newHook();
  const tooOld = await stored(hook, 3 * DAY, 'failed');
  const inWindow = [
    await stored(hook, 90 * MINUTE, 'skipped'),
    await stored(hook, 80 * MINUTE, 'failed'),
    await stored(hook, 70 * MINUTE, 'failed'),
    await stored(hook, 60 * MINUTE, 'skipped'),
    await stored(hook, 50 * MINUTE, 'failed'),
    // Beyond the limit: the newest two.
    await stored(hook, 40 * MINUTE, 'failed'),
    await stored(hook, 30 * MINUTE, 'skipped'),
  ];
  const untouched = [
    await stored(hook, 45 * MINUTE, 'succeeded'),
    await stored(hook, 44 * MINUTE, 'failed', { test: true }),
    await stored(hook, 10 * MINUTE, 'failed'), // after until
    await stored(other, 60 * MINUTE, 'failed'),
  ];
  const since = new Date(Date.now() - 2 * DAY).toISOString();
  const until = new Date(Date.now() - 20 * MINUTE).toISOString();
  const res = await call('POST', `/v1/webhooks/${hook}/recover`, { since, until });
  expect(res.statusCode).toBe(202);
  const started = res.json().data;
  expect(started).toEqual({ id: expect.stringMatching(/^rcv_/), status: 'running', queued: 0, total: LIMIT });

  const shown = await finished(hook, started.id);
  expect(shown).toEqual({
    id: started.id,
    webhook_id: hook,
    status: 'completed',
    queued: LIMIT,
    total: LIMIT,
    since,
    until,
    created_at: expect.any(String),
    finished_at: expect.any(String),
  });
  for (const d of inWindow.slice(0, LIMIT))
    expect(await statusOf(d)).toMatchObject({ status: 'pending', recovery_id: started.id });
  for (const d of inWindow.slice(LIMIT)) expect((await statusOf(d)).status).toBe(d.status);
  for (const d of [tooOld, ...untouched]) expect(await statusOf(d)).toMatchObject({ status: d.status });
  expect((await statusOf(tooOld)).recovery_id).toBeUndefined();

  // A second call from where the first stopped takes the rest.
  const again = (
    await call('POST', `/v1/webhooks/${hook}/recover`, { since: inWindow[LIMIT].created_at.toISOString(), until })
  ).json().data;
  expect(again).toMatchObject({ status: 'running', total: 2 });
  await finished(hook, again.id);
  for (const d of inWindow.slice(LIMIT)) expect((await statusOf(d)).status).toBe('pending');
});

test('when nothing in the window is owed, then the recovery is completed at once with a total of 0', async () => {
  const hook = await newHook();
  await stored(hook, MINUTE, 'succeeded');
  const res = await call('POST', `/v1/webhooks/${hook}/recover`, { since: new Date(Date.now() - DAY).toISOString() });
  expect(res.statusCode).toBe(202);
  expect(res.json().data).toEqual({ id: expect.stringMatching(/^rcv_/), status: 'completed', queued: 0, total: 0 });
});

test('when the window is out of bounds or malformed, the webhook inactive, or an id unknown, then the recovery is refused with the reason', async () => {
  const hook = await newHook();
  const path = `/v1/webhooks/${hook}/recover`;
  const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
  expectError(
    await call('POST', path, { since: ago(14 * DAY + MINUTE) }),
    400,
    'VALIDATION_ERROR',
    'since must be within the last 14 days',
  );
  expectError(
    await call('POST', path, { since: new Date(Date.now() + MINUTE).toISOString() }),
    400,
    'VALIDATION_ERROR',
    'since must not be in the future',
  );
  expectError(
    await call('POST', path, { since: ago(MINUTE), until: ago(2 * MINUTE) }),
    400,
    'VALIDATION_ERROR',
    'until must be after since',
  );
  expectError(
    await call('POST', path, { since: 'yesterday' }),
    400,
    'VALIDATION_ERROR',
    'since must be an ISO 8601 date-time',
  );
  expectError(
    await call('POST', path, { since: ago(MINUTE), until: '2026-13-01' }),
    400,
    'VALIDATION_ERROR',
    'until must be an ISO 8601 date-time',
  );
  expect((await call('POST', path, {})).statusCode).toBe(400);
  expect((await call('POST', path, { since: ago(14 * DAY - MINUTE) })).statusCode).toBe(202);
  const inactive = await newHook(false);
  expectError(
    await call('POST', `/v1/webhooks/${inactive}/recover`, { since: ago(MINUTE) }),
    422,
    'VALIDATION_ERROR',
    'Webhook is inactive',
  );
  expectError(
    await call('POST', '/v1/webhooks/wh_01jd3kc4d6e8f0g2h4j6k8m0n2/recover', { since: ago(MINUTE) }),
    404,
    'NOT_FOUND',
    'Webhook not found',
  );
  expectError(
    await call('GET', `/v1/webhooks/${hook}/recoveries/rcv_01jd3kc4d6e8f0g2h4j6k8m0n2`),
    404,
    'NOT_FOUND',
    'Recovery not found',
  );
});

test('when two replicas are asked to recover one webhook at once, or one is left running, then only one recovery runs and the others get 409', async () => {
  const hook = await newHook();
  for (let i = 0; i < 30; i++) await stored(hook, (40 - i) * MINUTE, 'failed');
  // Two replicas' recoveries on the one store; their webhook is active, and re-queueing is left out.
  const webhooks = { load: async () => ({ active: true }) } as never;
  const replicas = [0, 1].map(
    () =>
      new Recoveries({
        recoveries: new RecoveriesRepository(sut.db),
        webhooks,
        requeue: async () => {},
        queueAgain: async () => {},
        logger: quietLogger,
      }),
  );
  const body = { since: new Date(Date.now() - DAY).toISOString() };
  const outcomes = await Promise.allSettled(replicas.map((r) => r.start(who, hook, body)));
  expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
  const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
  expect(refused.reason).toMatchObject({ status: 409, message: 'A recovery is already running for this webhook' });
  await Promise.all(replicas.map((r) => r.settled()));

  // A recovery left running by a process that died bars another until it is resumed.
  const left = await leftRunning(hook, 0);
  expectError(
    await call('POST', `/v1/webhooks/${hook}/recover`, body),
    409,
    'DUPLICATE_ENTRY',
    'A recovery is already running for this webhook',
  );
  await sut.db.collection<WebhookRecoveryRecord>('webhook_recoveries').deleteOne({ _id: left._id });
});

/** A recovery as a process that died after re-queueing `done` of its deliveries leaves it: running, its progress stored as of then. */
async function leftRunning(
  webhookId: string,
  done: number,
  owed: DeliveryRecord[] = [],
): Promise<WebhookRecoveryRecord> {
  const now = new Date();
  const id = newId('rcv');
  for (const d of owed.slice(0, done))
    await deliveries().updateOne({ _id: d._id }, { $set: { status: 'pending', recovery_id: id } });
  const r: WebhookRecoveryRecord = {
    _id: id,
    team_id: who.teamId,
    webhook_id: webhookId,
    since: new Date(now.getTime() - DAY),
    until: now,
    status: 'running',
    // Its last stored progress is a page behind: the page it re-queued before dying was not stored.
    queued: Math.max(0, done - 2),
    total: owed.length,
    cursor_at: done > 2 ? owed[done - 3].created_at : null,
    cursor_id: done > 2 ? owed[done - 3]._id : null,
    created_at: now,
    updated_at: now,
    finished_at: null,
  };
  await sut.db.collection<WebhookRecoveryRecord>('webhook_recoveries').insertOne(r);
  return r;
}

test('when a recovery was left running by a process that died, then the maintenance resumes it where it got to, counts what the dead one re-queued and queues their attempts again', async () => {
  const hook = await newHook();
  const owed: DeliveryRecord[] = [];
  for (let i = 0; i < 12; i++) owed.push(await stored(hook, (30 - i) * MINUTE, i % 3 === 0 ? 'skipped' : 'failed'));
  const left = await leftRunning(hook, 7, owed);
  expect(await sut.recoveries.resumeStalled()).toBe(1);
  const shown = await finished(hook, left._id);
  expect(shown).toMatchObject({ status: 'completed', queued: 12, total: 12 });
  // The dead one may not have queued the attempts of those it made pending: they are queued again, once each.
  expect([...sut.queuedAgain].sort()).toEqual(
    owed
      .slice(0, 7)
      .map((d) => d._id)
      .sort(),
  );
  for (const d of owed) expect(await statusOf(d)).toMatchObject({ status: 'pending', recovery_id: left._id });
  // Nothing left to resume.
  expect(await sut.recoveries.resumeStalled()).toBe(0);
});
