// Receiver signals through the gateway of a running system, to real HTTPS receivers:
// a 429 or 503 with Retry-After (seconds or an HTTP date) puts the next attempt no
// sooner than it says, capped at the schedule's longest delay; a 410 Gone deactivates
// the webhook at once, with the owner's alert e-mail (real SMTP listener); and
// `rate_limit` is validated, stored and shown.
import { expectError } from '@lpm/test-kit/api';
import { startHttpsReceiver, type HttpsReceiver, type ReceiverReply } from '@lpm/test-kit/https-receiver';
import type { IssuedTeam, RunningSystem } from '@lpm/test-kit/running-system';
import { systemAndCompanionsForSuite } from '@lpm/test-kit/system-and-companions';
import { startSmtpListener, type SmtpListener } from '@lpm/test-kit/smtp-listener';
import { sleep, waitFor } from '@lpm/test-kit/wait';

// Attempts at 0, +1 s, +1 s, +5 s: the longest delay, the cap of a Retry-After, is 5 s.
const DELAYS_MS = [1000, 1000, 5000];
const LONGEST_MS = 5000;
/** Room for a busy machine between a delay queue's expiry and the POST. */
const SLACK_MS = 2500;

let sys: RunningSystem;
let smtp: SmtpListener;
let receiver: HttpsReceiver;
/** What each path answers to its first delivery attempt (later ones get 200). */
const firstAnswers = new Map<string, () => ReceiverReply>();

const call = (team: IssuedTeam, method: string, path: string, body?: unknown) =>
  sys.call(team.api_key, method, path, body);
const attemptsAt = (path: string) =>
  receiver.requests.filter((r) => r.path === path && JSON.parse(r.body).type !== 'ping');

async function subscribe(team: IssuedTeam, path: string, extra: Record<string, unknown> = {}): Promise<{ id: string }> {
  const res = await call(team, 'POST', '/v1/webhooks', {
    url: `${receiver.url}${path}`,
    events: ['client.created'],
    ...extra,
  });
  expect(res.status).toBe(201);
  return res.body.data as { id: string };
}

/** The gap between the first and the second attempt of a client.created to a webhook whose receiver first answers `first`. */
async function gapAfter(name: string, first: () => ReceiverReply): Promise<number> {
  const team = sys.team(name);
  const path = `/signals/${name.replace(/\W/g, '')}`;
  firstAnswers.set(path, first);
  await subscribe(team, path);
  await call(team, 'POST', '/v1/clients', { type: 'PF', name });
  await waitFor(`the second attempt to ${path}`, () => attemptsAt(path).length === 2, 20_000);
  const [a, b] = attemptsAt(path);
  return b.at - a.at;
}

systemAndCompanionsForSuite('webhookssignals', {
  async start() {
    smtp = await startSmtpListener();
    receiver = await startHttpsReceiver((req) => {
      if (JSON.parse(req.body).type === 'ping') return { status: 200 };
      if (req.path === '/gone') return { status: 410, body: 'gone' };
      const first = firstAnswers.get(req.path);
      return first && attemptsAt(req.path).length === 1 ? first() : { status: 200 };
    });
    return {
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_RETRY_DELAYS: DELAYS_MS.map((ms) => `${ms}ms`).join(','),
      SMTP_URL: smtp.url,
      MAIL_FROM: 'alerts@lpm.test',
    };
  },
  ready(started) {
    sys = started;
  },
  async close() {
    await receiver?.close();
    await smtp?.close();
  },
});

test('when a receiver answers 429 with Retry-After in seconds, then the next attempt comes no sooner than that, beyond the scheduled delay', async () => {
  const gap = await gapAfter('Retry seconds', () => ({ status: 429, headers: { 'retry-after': '3' } }));
  expect(gap).toBeGreaterThanOrEqual(3000);
  expect(gap).toBeLessThan(3000 + SLACK_MS);
});

test('when a receiver answers 503 with Retry-After as an HTTP date, then the next attempt comes no sooner than that date', async () => {
  let until = 0;
  const gap = await gapAfter('Retry date', () => {
    until = Math.ceil(Date.now() / 1000) * 1000 + 4000;
    return { status: 503, headers: { 'retry-after': new Date(until).toUTCString() } };
  });
  const [, second] = attemptsAt('/signals/Retrydate');
  expect(second.at).toBeGreaterThanOrEqual(until);
  expect(gap).toBeLessThan(5000 + SLACK_MS);
});

test('when Retry-After is beyond the schedule, then the next attempt waits the longest delay of the schedule, and no more', async () => {
  const gap = await gapAfter('Retry cap', () => ({ status: 429, headers: { 'retry-after': '3600' } }));
  expect(gap).toBeGreaterThanOrEqual(LONGEST_MS);
  expect(gap).toBeLessThan(LONGEST_MS + SLACK_MS);
});

test('when a 429 has no Retry-After, or a 500 has one, then the next attempt keeps the schedule', async () => {
  for (const [name, reply] of [
    ['Plain 429', { status: 429 }],
    ['Retry 500', { status: 500, headers: { 'retry-after': '3' } }],
  ] as const) {
    const gap = await gapAfter(name, () => reply);
    expect(gap).toBeGreaterThanOrEqual(DELAYS_MS[0]);
    expect(gap).toBeLessThan(DELAYS_MS[0] + SLACK_MS - 500);
  }
});

test('when a receiver answers 410 Gone, then the webhook is deactivated at once, the delivery fails, and the owner gets the alert e-mail', async () => {
  const team = sys.team('Sumiu');
  const hook = await subscribe(team, '/gone');
  await call(team, 'POST', '/v1/clients', { type: 'PJ', name: 'Sumiu' });
  const [mail] = await smtp.waitFor(1, 20_000);
  expect(mail.to).toEqual([team.user.email]);
  expect(mail.subject).toBe(`Webhook deactivated: ${receiver.url}`);
  expect(mail.text).toContain(`${hook.id} (${receiver.url}) answered 410 Gone and has been deactivated`);
  expect(attemptsAt('/gone')).toHaveLength(1);
  const shown = (await call(team, 'GET', `/v1/webhooks/${hook.id}`)).body.data as Record<string, unknown>;
  expect(shown.active).toBe(false);
  // The log shows a delivery once the attempt's outcome is stored, just after the deactivation it caused.
  let delivery: Record<string, unknown> | undefined;
  await waitFor('the delivery in the log', async () => {
    [delivery] = (await call(team, 'GET', `/v1/webhooks/${hook.id}/deliveries`)).body.data as Record<string, unknown>[];
    return delivery !== undefined;
  });
  expect(delivery).toMatchObject({ status: 'failed', attempts_count: 1, next_attempt_at: null });
  // Past every retry delay: nothing more is sent.
  await sleep(DELAYS_MS[0] + 1000);
  expect(attemptsAt('/gone')).toHaveLength(1);
  expect(smtp.messages).toHaveLength(1);
});

test('when rate_limit is given, then it is stored and shown, null removes it, and values outside 1..1000 are refused', async () => {
  const team = sys.team('Limite');
  const message = 'rate_limit must be an integer from 1 to 1000, or null';
  for (const bad of [0, 1001, 2.5, '5']) {
    expectError(
      await call(team, 'POST', '/v1/webhooks', { url: `${receiver.url}/limit/bad`, events: ['*'], rate_limit: bad }),
      400,
      'VALIDATION_ERROR',
      message,
    );
  }
  const created = (
    await call(team, 'POST', '/v1/webhooks', { url: `${receiver.url}/limit`, events: ['*'], rate_limit: 5 })
  ).body.data as Record<string, unknown>;
  expect(created.rate_limit).toBe(5);
  const shown = async () =>
    (await call(team, 'GET', `/v1/webhooks/${String(created.id)}`)).body.data as Record<string, unknown>;
  expect((await shown()).rate_limit).toBe(5);
  expect((await call(team, 'PUT', `/v1/webhooks/${String(created.id)}`, { rate_limit: 1000 })).body.data).toMatchObject(
    { rate_limit: 1000 },
  );
  expect((await shown()).rate_limit).toBe(1000);
  expectError(
    await call(team, 'PUT', `/v1/webhooks/${String(created.id)}`, { rate_limit: 0 }),
    400,
    'VALIDATION_ERROR',
    message,
  );
  await call(team, 'PUT', `/v1/webhooks/${String(created.id)}`, { rate_limit: null });
  expect((await shown()).rate_limit).toBeNull();
  const [listed] = (await call(team, 'GET', '/v1/webhooks')).body.data as Record<string, unknown>[];
  expect(listed.rate_limit).toBeNull();
});
