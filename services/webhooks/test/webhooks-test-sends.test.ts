// Test sends through the gateway of a running system, to real HTTPS receivers:
// the catalog's example of the event, signed as usual (verified with the
// standardwebhooks package) and marked `"test": true`, shown in the delivery log
// and counted apart from the webhook's other deliveries; one attempt, no retries,
// and a failed one never deactivates the webhook.
import { Webhook } from 'standardwebhooks';
import { eventExample } from '@lpm/shared/webhook-catalog';
import { expectError } from '@lpm/test-kit/api';
import type { HttpsReceiver } from '@lpm/test-kit/https-receiver';
import type { IssuedTeam, RunningSystem } from '@lpm/test-kit/running-system';
import { sleep, waitFor } from '@lpm/test-kit/wait';
import { receivingSystemForSuite } from './receiving-system.ts';

let sys: RunningSystem;
let receiver: HttpsReceiver;

const call = (team: IssuedTeam, method: string, path: string, body?: unknown) =>
  sys.call(team.api_key, method, path, body);
const sentTo = (path: string) => receiver.requests.filter((r) => r.path === path && JSON.parse(r.body).type !== 'ping');

async function subscribe(team: IssuedTeam, path: string): Promise<{ id: string; secret: string }> {
  const res = await call(team, 'POST', '/v1/webhooks', { url: `${receiver.url}${path}`, events: ['client.created'] });
  expect(res.status).toBe(201);
  return res.body.data as { id: string; secret: string };
}

receivingSystemForSuite('webhookstest', (started) => ({ sys, receiver } = started), {
  env: { WEBHOOK_RETRY_DELAYS: '500ms,500ms' },
  answer: (req) =>
    req.path.startsWith('/down') && JSON.parse(req.body).type !== 'ping'
      ? { status: 500, body: 'down' }
      : { status: 200 },
});

test('when a test event is sent, then the receiver gets the catalog example signed as usual with test true, and the log shows it as a test', async () => {
  const team = sys.team('Teste');
  const hook = await subscribe(team, '/test/ok');
  const res = await call(team, 'POST', `/v1/webhooks/${hook.id}/test`, { event: 'deal.won' });
  expect(res.status).toBe(202);
  const queued = res.body.data as { id: string; event_id: string };
  expect(queued).toEqual({
    id: expect.stringMatching(/^dlv_/),
    event_id: expect.stringMatching(/^evt_/),
    event_type: 'deal.won',
    status: 'pending',
    attempts_count: 0,
    test: true,
  });

  await waitFor('the test delivery', () => sentTo('/test/ok').length === 1);
  const [req] = sentTo('/test/ok');
  const body = new Webhook(hook.secret).verify(req.body, req.headers as Record<string, string>) as Record<
    string,
    unknown
  >;
  const example = eventExample('deal.won');
  expect(body).toEqual({
    ...example,
    id: queued.event_id,
    created_at: expect.any(String),
    team_id: team.team.id,
    webhook_id: hook.id,
    test: true,
  });
  expect(req.headers['webhook-id']).toBe(queued.event_id);

  await waitFor(
    'the log',
    async () => (await call(team, 'GET', `/v1/webhooks/${hook.id}/deliveries`)).body.data[0]?.status === 'succeeded',
  );
  const [logged] = (await call(team, 'GET', `/v1/webhooks/${hook.id}/deliveries`)).body.data as Record<
    string,
    unknown
  >[];
  expect(logged).toMatchObject({
    id: queued.id,
    event_id: queued.event_id,
    event_type: 'deal.won',
    test: true,
    attempts_count: 1,
  });

  // A real event beside it: counted as usual, and not a test.
  await call(team, 'POST', '/v1/clients', { type: 'PF', name: 'Real' });
  await waitFor('the real delivery', () => sentTo('/test/ok').length === 2);
  expect(JSON.parse(sentTo('/test/ok')[1].body).test).toBeUndefined();
  const stats = async () => (await call(team, 'GET', `/v1/webhooks/${hook.id}`)).body.data as Record<string, unknown>;
  await waitFor(
    'the counters',
    async () => (await stats()).total_deliveries === 1 && (await stats()).test_deliveries === 1,
  );
  expect(await stats()).toMatchObject({
    total_deliveries: 1,
    failed_deliveries: 0,
    test_deliveries: 1,
    test_failed_deliveries: 0,
    success_rate: 100,
  });
  const log = (await call(team, 'GET', `/v1/webhooks/${hook.id}/deliveries`)).body.data as { test: boolean }[];
  expect(log.map((d) => d.test).sort()).toEqual([false, true]);
});

test('when a test send fails, then it is tried once, counted apart, and the webhook stays active after more failures than deactivate one', async () => {
  const team = sys.team('Teste falho');
  const hook = await subscribe(team, '/down/test');
  for (let i = 0; i < 7; i++)
    expect((await call(team, 'POST', `/v1/webhooks/${hook.id}/test`, { event: 'case.created' })).status).toBe(202);
  await waitFor('seven test attempts', () => sentTo('/down/test').length === 7);
  const stats = async () => (await call(team, 'GET', `/v1/webhooks/${hook.id}`)).body.data as Record<string, unknown>;
  await waitFor('the counters', async () => (await stats()).test_deliveries === 7);
  // Past the retry delays: no second attempt of any of them.
  await sleep(1500);
  expect(sentTo('/down/test')).toHaveLength(7);
  expect(await stats()).toMatchObject({
    active: true,
    total_deliveries: 0,
    failed_deliveries: 0,
    test_deliveries: 7,
    test_failed_deliveries: 7,
    success_rate: 100,
  });
  const log = (await call(team, 'GET', `/v1/webhooks/${hook.id}/deliveries`)).body.data as Record<string, unknown>[];
  expect(log).toHaveLength(7);
  for (const d of log)
    expect(d).toMatchObject({ status: 'failed', attempts_count: 1, test: true, next_attempt_at: null });
});

test('when the event is not in the catalog, the body is missing, or the webhook is inactive or unknown, then the test send is refused', async () => {
  const team = sys.team('Teste recusado');
  const hook = await subscribe(team, '/test/refused');
  const path = `/v1/webhooks/${hook.id}/test`;
  const message = 'event must be one of the event types of GET /v1/webhooks/event-types';
  expectError(await call(team, 'POST', path, { event: 'case.exploded' }), 400, 'VALIDATION_ERROR', message);
  expectError(await call(team, 'POST', path, { event: 'ping' }), 400, 'VALIDATION_ERROR', message);
  expect((await call(team, 'POST', path, {})).status).toBe(400);
  expectError(
    await call(team, 'POST', '/v1/webhooks/wh_01jd3kc4d6e8f0g2h4j6k8m0n2/test', { event: 'case.created' }),
    404,
    'NOT_FOUND',
    'Webhook not found',
  );
  expect((await call(team, 'PUT', `/v1/webhooks/${hook.id}`, { active: false })).status).toBe(200);
  expectError(
    await call(team, 'POST', path, { event: 'case.created' }),
    422,
    'VALIDATION_ERROR',
    'Webhook is inactive',
  );
  expect(sentTo('/test/refused')).toHaveLength(0);
});
