// Retries through RabbitMQ delay queues at the configured delays, and automatic
// deactivation after 6 failed attempts with an alert e-mail to the team owner
// through a real SMTP listener.
import type { IssuedTeam, RunningSystem } from '@lpm/test-kit/running-system';
import { systemAndCompanionsForSuite } from '@lpm/test-kit/system-and-companions';
import { startHttpsReceiver, type HttpsReceiver } from '@lpm/test-kit/https-receiver';
import { startSmtpListener, type SmtpListener } from '@lpm/test-kit/smtp-listener';
import { waitFor } from '@lpm/test-kit/wait';
import { retryDelivery } from './receiving-system.ts';

// Attempts at 0, +1 s, +2 s, +1 s, +1 s, +1 s (the production tiers are 5m,30m,2h,12h,24h).
const DELAYS_MS = [1000, 2000, 1000, 1000, 1000];

let sys: RunningSystem;
let smtp: SmtpListener;
let t: IssuedTeam;

const call = (method: string, path: string, body?: unknown, key = t.api_key) => sys.call(key, method, path, body);
const deliveriesOf = (r: HttpsReceiver) => r.requests.filter((q) => JSON.parse(q.body).type !== 'ping');

systemAndCompanionsForSuite('webhooksretry', {
  async start() {
    smtp = await startSmtpListener();
    return {
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_RETRY_DELAYS: DELAYS_MS.map((ms) => `${ms}ms`).join(','),
      // The receiver answers at once, but it runs in this busy process: a POST it answers after the sender's
      // deadline is a failed attempt (a timeout), rightly retried, and would be one more POST than expected.
      WEBHOOK_TIMEOUT_MS: '5000',
      SMTP_URL: smtp.url,
      MAIL_FROM: 'alerts@lpm.test',
    };
  },
  ready(started) {
    sys = started;
    t = sys.team('Tentativas');
  },
  close: async () => smtp?.close(),
});

test('when a receiver fails twice and then answers 200, then it gets the same event id three times, at the configured delays', async () => {
  let calls = 0;
  const receiver = await startHttpsReceiver((req) => {
    if (JSON.parse(req.body).type === 'ping') return { status: 200 };
    calls++;
    return { status: calls <= 2 ? 503 : 200 };
  });
  try {
    const hook = (await call('POST', '/v1/webhooks', { url: `${receiver.url}/flaky`, events: ['client.created'] })).body
      .data;
    await call('POST', '/v1/clients', { type: 'PF', name: 'Insistente' });
    await waitFor('three attempts', () => deliveriesOf(receiver).length === 3, 20_000);
    const attempts = deliveriesOf(receiver);
    const ids = attempts.map((r) => JSON.parse(r.body).id);
    expect(new Set(ids).size).toBe(1);
    expect(attempts.map((r) => r.headers['x-service-event-id'])).toEqual(ids);
    expect(new Set(attempts.map((r) => r.body)).size).toBe(1);
    const gaps = [attempts[1].at - attempts[0].at, attempts[2].at - attempts[1].at];
    // A queue-level TTL never fires early; the upper bound leaves room for a busy machine.
    expect(gaps[0]).toBeGreaterThanOrEqual(DELAYS_MS[0]);
    expect(gaps[0]).toBeLessThan(DELAYS_MS[0] + 3000);
    expect(gaps[1]).toBeGreaterThanOrEqual(DELAYS_MS[1]);
    expect(gaps[1]).toBeLessThan(DELAYS_MS[1] + 3000);

    await new Promise((r) => setTimeout(r, 1500));
    // The attempts as recorded first: a POST more than the receiver's three shows there with its cause.
    const log = (await call('GET', `/v1/webhooks/${hook.id}/deliveries`)).body.data[0];
    expect(
      log.attempts.map((a: { status_code: number; error_class: string | null }) => [a.status_code, a.error_class]),
    ).toEqual([
      [503, 'http_5xx'],
      [503, 'http_5xx'],
      [200, null],
    ]);
    expect(log).toMatchObject({ status: 'succeeded', attempts_count: 3 });
    expect(deliveriesOf(receiver)).toHaveLength(3);
    const stats = async () => (await call('GET', '/v1/webhooks')).body.data[0];
    await waitFor('the counters', async () => (await stats()).total_deliveries === 3);
    expect(await stats()).toMatchObject({
      total_deliveries: 3,
      failed_deliveries: 2,
      success_rate: 33.3,
      active: true,
    });
  } finally {
    await receiver.close();
  }
});

test('when a receiver always fails, then after 6 attempts the webhook is inactive and the owner gets an alert e-mail', async () => {
  const team = sys.team('Sempre falha');
  let reachable = true;
  const receiver = await startHttpsReceiver((req) =>
    JSON.parse(req.body).type === 'ping' && reachable ? { status: 204 } : { status: 500, body: 'down' },
  );
  try {
    // A URL carrying a credential in its path and query, as receivers' URLs often do.
    const hook = (
      await call(
        'POST',
        '/v1/webhooks',
        { url: `${receiver.url}/down/k3y-in-path?token=s3cret`, events: ['client.created'] },
        team.api_key,
      )
    ).body.data;
    reachable = false;
    await call('POST', '/v1/clients', { type: 'PJ', name: 'Fora do ar' }, team.api_key);
    const [mail] = await smtp.waitFor(1, 30_000);
    expect(deliveriesOf(receiver)).toHaveLength(6);
    expect(mail.to).toEqual([team.user.email]);
    expect(mail.from).toBe('alerts@lpm.test');
    // Scheme and host only, in the subject and the body alike.
    expect(mail.subject).toBe(`Webhook deactivated: ${receiver.url}`);
    expect(mail.text).toContain(`${hook.id} (${receiver.url})`);
    for (const part of ['/down', 'k3y-in-path', 's3cret']) expect(mail.raw).not.toContain(part);

    const listed = async () => (await call('GET', '/v1/webhooks', undefined, team.api_key)).body.data[0];
    await waitFor('the counters', async () => (await listed()).total_deliveries === 6);
    expect(await listed()).toMatchObject({
      id: hook.id,
      active: false,
      total_deliveries: 6,
      failed_deliveries: 6,
      success_rate: 0,
    });
    const [delivery] = (await call('GET', `/v1/webhooks/${hook.id}/deliveries`, undefined, team.api_key)).body.data;
    expect(delivery).toMatchObject({ status: 'failed', attempts_count: 6 });

    // Inactive: new events are not delivered; a manual retry is refused.
    await call('POST', '/v1/clients', { type: 'PJ', name: 'Ignorada' }, team.api_key);
    await new Promise((r) => setTimeout(r, 1500));
    expect(deliveriesOf(receiver)).toHaveLength(6);
    const retry = await retryDelivery(sys, team.api_key, hook.id, delivery.id);
    expect(retry.status).toBe(422);
    expect(retry.body.error.message).toBe('Webhook is inactive');

    // Re-activated: the count starts afresh (one failure does not deactivate it again).
    reachable = true;
    expect((await call('PUT', `/v1/webhooks/${hook.id}`, { active: true }, team.api_key)).status).toBe(200);
    reachable = false;
    await call('POST', '/v1/clients', { type: 'PJ', name: 'De novo' }, team.api_key);
    await waitFor('the first attempt after re-activation', () => deliveriesOf(receiver).length === 7, 10_000);
    const [again] = (await call('GET', '/v1/webhooks', undefined, team.api_key)).body.data;
    expect(again.active).toBe(true);
    expect(smtp.messages).toHaveLength(1);
  } finally {
    await receiver.close();
  }
});
