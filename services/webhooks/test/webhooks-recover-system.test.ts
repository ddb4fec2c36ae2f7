// Recover through the gateway of a running system, to a real HTTPS receiver: events
// that come while a webhook is inactive are kept as skipped deliveries in its log,
// and deliveries that failed for good stay failed; a recovery sends them all again
// once the webhook is active, with their event ids, signed as usual (verified with the
// standardwebhooks package), and its progress reaches completed.
import { Webhook } from 'standardwebhooks';
import type { HttpsReceiver } from '@lpm/test-kit/https-receiver';
import type { IssuedTeam, RunningSystem } from '@lpm/test-kit/running-system';
import { sleep, waitFor } from '@lpm/test-kit/wait';
import { receivingSystemForSuite } from './receiving-system.ts';

let sys: RunningSystem;
let receiver: HttpsReceiver;
let down = false;

const call = (team: IssuedTeam, method: string, path: string, body?: unknown) =>
  sys.call(team.api_key, method, path, body);
const events = () =>
  receiver.requests.map((r) => ({ r, body: JSON.parse(r.body) })).filter(({ body }) => body.type === 'client.created');

receivingSystemForSuite('webhooksrecover', (started) => ({ sys, receiver } = started), {
  env: { WEBHOOK_RETRY_DELAYS: '300ms' },
  answer: (req) => (down && JSON.parse(req.body).type !== 'ping' ? { status: 500 } : { status: 200 }),
});

test('when events come while a webhook is inactive and others fail for good, then they are kept in the log, and a recovery sends them all again, signed', async () => {
  const team = sys.team('Recuperação');
  const since = new Date(Date.now() - 1000).toISOString();
  const hook = (
    await call(team, 'POST', '/v1/webhooks', { url: `${receiver.url}/recover`, events: ['client.created'] })
  ).body.data as { id: string; secret: string };
  const log = async () =>
    (await call(team, 'GET', `/v1/webhooks/${hook.id}/deliveries?sort=created_at`)).body.data as Record<
      string,
      unknown
    >[];

  // Failed for good: both attempts answered 500.
  down = true;
  await call(team, 'POST', '/v1/clients', { type: 'PF', name: 'Falhou' });
  await waitFor('a delivery failed for good', async () => (await log())[0]?.status === 'failed');

  expect((await call(team, 'PUT', `/v1/webhooks/${hook.id}`, { active: false })).status).toBe(200);
  for (const name of ['Pulado 1', 'Pulado 2']) await call(team, 'POST', '/v1/clients', { type: 'PF', name });
  await waitFor(
    'two skipped deliveries in the log',
    async () => (await log()).filter((d) => d.status === 'skipped').length === 2,
  );
  await sleep(500);
  expect(events()).toHaveLength(2);
  const kept = await log();
  expect(kept.map((d) => [d.status, d.attempts_count])).toEqual([
    ['failed', 2],
    ['skipped', 0],
    ['skipped', 0],
  ]);

  down = false;
  expect((await call(team, 'PUT', `/v1/webhooks/${hook.id}`, { active: true })).status).toBe(200);
  const res = await call(team, 'POST', `/v1/webhooks/${hook.id}/recover`, { since });
  expect(res.status).toBe(202);
  const started = res.body.data as { id: string };
  expect(started).toMatchObject({ status: expect.stringMatching(/^(running|completed)$/), total: 3 });
  await waitFor(
    'the recovery completed',
    async () =>
      (await call(team, 'GET', `/v1/webhooks/${hook.id}/recoveries/${started.id}`)).body.data.status === 'completed',
  );
  expect((await call(team, 'GET', `/v1/webhooks/${hook.id}/recoveries/${started.id}`)).body.data).toMatchObject({
    queued: 3,
    total: 3,
    webhook_id: hook.id,
  });

  await waitFor('the three sent again', () => events().length === 5);
  const resent = events().slice(2);
  expect(resent.map(({ body }) => body.id).sort()).toEqual(kept.map((d) => d.event_id).sort());
  for (const { r } of resent) new Webhook(hook.secret).verify(r.body, r.headers as Record<string, string>);
  await waitFor('every delivery succeeded', async () => (await log()).every((d) => d.status === 'succeeded'));
  expect((await log()).map((d) => d.attempts_count)).toEqual([3, 1, 1]);
});
