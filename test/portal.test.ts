// The webhooks portal end to end: a running system, a real HTTPS receiver, and the
// page driven in Debian's Chromium (playwright-core) at a phone's width, by its
// labels and buttons' names as a screen reader finds them. Screenshots of each
// step go to test-artifacts/portal/.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MongoClient } from 'mongodb';
import { chromium, type Browser, type Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { startHttpsReceiver, type HttpsReceiver } from '@lpm/test-kit/https-receiver';
import { startRunningSystem, type IssuedTeam, type RunningSystem } from '@lpm/test-kit/running-system';
import { waitFor } from '@lpm/test-kit/wait';
import { generatePortalToken, keyDigest } from '../gateway/src/domain/keys.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const ARTIFACTS = join(root, 'test-artifacts', 'portal');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** A phone's width: the page must read without scrolling sideways. */
const VIEWPORT = { width: 375, height: 812 };

let sys: RunningSystem;
let receiver: HttpsReceiver;
let browser: Browser;
let team: IssuedTeam;
let page: Page;
let hook: { id: string; url: string; secret: string };
const requested: string[] = [];
/** Errors the page's scripts threw or logged: none is expected. */
const pageErrors: string[] = [];

type Session = { id: string; url: string; token: string; expires_at: string };

async function openSession(): Promise<Session> {
  const res = await sys.call<Session>(team.api_key, 'POST', '/v1/webhooks/portal-sessions', {});
  expect(res.status).toBe(201);
  return res.body.data;
}

const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
const status = () => page.locator('#status');
/** The delivery rows of the log shown, as their text. */
const rows = () => page.locator('.deliveries tbody tr:not(.attempts-row)');

async function refreshUntil(what: string, row: () => ReturnType<Page['locator']>) {
  await waitFor(
    what,
    async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      await page.waitForTimeout(300);
      return (await row().count()) > 0;
    },
    30_000,
  );
}

beforeAll(async () => {
  // Short retries: a delivery fails for good (six attempts) within seconds.
  sys = await startRunningSystem('portal', {
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_RETRY_DELAYS: '200ms,200ms,200ms,200ms,200ms',
    WEBHOOK_TIMEOUT_MS: '2000',
  });
  receiver = await startHttpsReceiver();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  team = sys.team('Portal');
  mkdirSync(ARTIFACTS, { recursive: true });
  page = await browser.newPage({ viewport: VIEWPORT, ignoreHTTPSErrors: false });
  page.on('request', (r) => requested.push(r.url()));
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') pageErrors.push(m.text());
  });
  page.on('dialog', (d) => void d.accept());
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await sys?.stop();
});

test('when the session URL is opened, then the portal shows the endpoints, the token leaves the address bar, and nothing is asked of another host', async () => {
  const session = await openSession();
  const res = await page.goto(session.url);
  expect(res?.status()).toBe(200);
  await page.getByRole('heading', { name: 'Endpoints', level: 2 }).waitFor();
  await page.getByText('No endpoint yet.').waitFor();
  expect(page.url()).toBe(`http://127.0.0.1:${sys.base}/portal?session=${session.id}`);
  expect(await page.evaluate('document.activeElement?.tagName')).toBe('H2');
  await shot('1-opened');
  expect(requested.filter((url) => !url.startsWith(`http://127.0.0.1:${sys.base}/`))).toEqual([]);
});

test('when an endpoint to an HTTPS receiver is added on the page, then its secret is shown once and it is listed as active', async () => {
  await page.getByRole('button', { name: 'Add an endpoint' }).click();
  await page.getByLabel('URL').fill(`${receiver.url}/portal`);
  await page.getByLabel('Description (optional)').fill('Portal receiver');
  await page.getByLabel('client.created').check();
  await page.getByRole('button', { name: 'Add endpoint', exact: true }).click();
  await page.getByRole('heading', { name: 'Endpoint added' }).waitFor();
  const secret = await page.getByLabel('Signing secret').inputValue();
  expect(secret).toMatch(/^whsec_/);
  await shot('2-endpoint-added');
  const listed = (await sys.call<{ id: string; url: string; active: boolean }[]>(team.api_key, 'GET', '/v1/webhooks'))
    .body.data;
  expect(listed).toEqual([expect.objectContaining({ url: `${receiver.url}/portal`, active: true })]);
  hook = { id: listed[0].id, url: listed[0].url, secret };
  await page.getByRole('button', { name: 'Back to endpoints' }).click();
  const row = page.locator('tbody tr', { hasText: hook.url });
  await row.getByText('Active').waitFor();
  await row.getByText('client.created').waitFor();
  // Laid out as cards at this width, the list is still a table to a screen reader.
  expect(
    await page.getByRole('table', { name: 'Endpoints of the team' }).getByRole('columnheader').allInnerTexts(),
  ).toEqual(['URL', 'Status', 'Events', 'Success (24 h)', 'Actions']);
  expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(VIEWPORT.width);
  await shot('2-endpoints');
  await page.getByRole('button', { name: `Manage ${hook.url}` }).click();
  await page.getByRole('heading', { name: `Endpoint ${hook.url}` }).waitFor();
});

test('when a test event is sent from the page, then the receiver gets it signed with test: true and the log shows it', async () => {
  const before = receiver.requests.length;
  await page.getByLabel('Event', { exact: true }).selectOption('client.created');
  await page.getByRole('button', { name: 'Send test event' }).click();
  await status().getByText('Test event sent').waitFor();
  await waitFor('the test delivery', () => receiver.requests.slice(before).some((r) => r.path === '/portal'));
  const got = receiver.requests.slice(before).find((r) => r.path === '/portal')!;
  expect(JSON.parse(got.body)).toMatchObject({ type: 'client.created', test: true });
  expect(() => new Webhook(hook.secret).verify(got.body, got.headers as Record<string, string>)).not.toThrow();
  await refreshUntil('the test delivery in the log', () =>
    rows().filter({ hasText: 'succeeded' }).filter({ hasText: 'client.created' }),
  );
  await shot('3-test-event');
});

/**
 * A client created (returned) while the receiver answers 500 with `why`: its six attempts fail, the
 * receiver answers again, and the endpoint is disabled (at the counters' next fold,
 * within about a second of the sixth failure).
 */
async function failedSixTimes(name: string, why: string): Promise<{ id: string }> {
  receiver.respond(() => ({ status: 500, body: why }));
  const client = (await sys.call<{ id: string }>(team.api_key, 'POST', '/v1/clients', { type: 'PF', name })).body.data;
  await waitFor(
    'six failed attempts',
    () => receiver.requests.filter((r) => r.body.includes(client.id)).length >= 6,
    30_000,
  );
  receiver.respond(() => ({ status: 200, body: '{"ok":true}' }));
  await waitFor(
    'the endpoint disabled',
    async () => !(await sys.call<{ active: boolean }>(team.api_key, 'GET', `/v1/webhooks/${hook.id}`)).body.data.active,
  );
  return client;
}

test('when a delivery fails for good, then on the page the endpoint is enabled again, the delivery retried, and it succeeds', async () => {
  await failedSixTimes('Falha Portal', 'receiver down for the test');
  await page.getByLabel('Status', { exact: true }).selectOption('failed');
  await page.getByRole('button', { name: 'Show deliveries' }).click();
  await refreshUntil('the failed delivery in the log', () => rows().filter({ hasText: 'failed' }));
  const failed = rows().filter({ hasText: 'failed' }).first();
  await failed.getByRole('button', { name: /^Attempts of / }).click();
  await page.locator('.attempts-row').getByText('receiver down for the test').first().waitFor();
  await shot('4-failed');

  // Six failures in a row disabled the endpoint: enable it, then retry.
  await page.getByRole('button', { name: '← All endpoints' }).click();
  await page.locator('tbody tr', { hasText: hook.url }).getByText('Disabled').waitFor();
  await page.getByRole('button', { name: `Manage ${hook.url}` }).click();
  await page.getByRole('button', { name: 'Enable' }).click();
  await status().getByText('Endpoint enabled').waitFor();
  await page.getByLabel('Status', { exact: true }).selectOption('failed');
  await page.getByRole('button', { name: 'Show deliveries' }).click();
  await rows().filter({ hasText: 'failed' }).first().waitFor();
  const eventId = (await rows().filter({ hasText: 'failed' }).first().locator('code').innerText()).trim();
  await page.getByRole('button', { name: `Retry client.created ${eventId}` }).click();
  await status().getByText(`Delivery of ${eventId} sent again`).waitFor();
  await page.getByLabel('Status', { exact: true }).selectOption('');
  await page.getByLabel('Event id').fill(eventId);
  await page.getByRole('button', { name: 'Show deliveries' }).click();
  await refreshUntil('the retried delivery succeeded', () =>
    rows().filter({ hasText: 'succeeded' }).filter({ hasText: eventId }),
  );
  expect(await rows().count()).toBe(1);
  await shot('4-retried');
}, 90_000);

test('when the endpoint was disabled by failures, then recovering since a time on the page sends its failed deliveries again', async () => {
  const client = await failedSixTimes('Recuperação Portal', 'down again');
  await page.getByRole('button', { name: '← All endpoints' }).click();
  await page.getByRole('button', { name: `Manage ${hook.url}` }).click();
  await page.getByRole('button', { name: 'Enable' }).click();
  await status().getByText('Endpoint enabled').waitFor();
  // The reader's local time, as a datetime-local field takes it: an hour ago.
  const since = await page.evaluate(
    '(() => { const d = new Date(Date.now() - 3600000); d.setMinutes(d.getMinutes() - d.getTimezoneOffset()); return d.toISOString().slice(0, 16); })()',
  );
  await page.getByLabel('Since').fill(String(since));
  await page.getByRole('button', { name: 'Recover', exact: true }).click();
  await status()
    .getByText(/^Recovery completed/)
    .waitFor({ timeout: 30_000 });
  await expect(
    page
      .locator('.result')
      .getByText(/completed: [1-9]\d* of [1-9]\d* deliveries queued again/)
      .count(),
  ).resolves.toBe(1);
  await waitFor(
    'the recovered delivery sent again',
    () => receiver.requests.filter((r) => r.body.includes(client.id)).length >= 7,
    30_000,
  );
  const eventId = (JSON.parse(receiver.requests.find((r) => r.body.includes(client.id))!.body) as { id: string }).id;
  await waitFor(
    'the recovered delivery succeeded',
    async () => {
      const log = await sys.call<{ status: string; attempts: unknown[] }[]>(
        team.api_key,
        'GET',
        `/v1/webhooks/${hook.id}/deliveries?event_id=${eventId}`,
      );
      return (
        log.body.data.length === 1 && log.body.data[0].status === 'succeeded' && log.body.data[0].attempts.length === 7
      );
    },
    30_000,
  );
  await shot('4-recovered');
}, 90_000);

test('when the secret is rotated from the keyboard, then the new one is shown once and the next delivery verifies with it', async () => {
  const hours = page.getByLabel('Hours the old secret keeps signing');
  await hours.focus();
  await page.keyboard.press('Control+A');
  await page.keyboard.type('1');
  await page.keyboard.press('Enter');
  await status().getByText('Secret rotated').waitFor();
  const secret = await page.getByLabel('New signing secret').inputValue();
  expect(secret).toMatch(/^whsec_/);
  expect(secret).not.toBe(hook.secret);
  await shot('5-rotated');
  const client = (
    await sys.call<{ id: string }>(team.api_key, 'POST', '/v1/clients', { type: 'PF', name: 'Rotação Portal' })
  ).body.data;
  await waitFor('the delivery after the rotation', () => receiver.requests.some((r) => r.body.includes(client.id)));
  const got = receiver.requests.find((r) => r.body.includes(client.id))!;
  expect(() => new Webhook(secret).verify(got.body, got.headers as Record<string, string>)).not.toThrow();
  const shown = (await sys.call<{ previous_secret_expires_at: string }>(team.api_key, 'GET', `/v1/webhooks/${hook.id}`))
    .body.data;
  expect(Date.parse(shown.previous_secret_expires_at) - Date.now()).toBeLessThanOrEqual(3_600_000);
});

test('when the endpoint is edited on the page, then its description and rate limit change and the page shows them', async () => {
  // By keyboard: the button takes the focus and Enter presses it.
  await page.getByRole('button', { name: 'Edit', exact: true }).focus();
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: `Edit ${hook.url}` }).waitFor();
  await page.getByLabel('Description (optional)').fill('Portal receiver, limited');
  await page.getByLabel('Deliveries per second at most (optional)').fill('50');
  await page.getByRole('button', { name: 'Save' }).click();
  await status().getByText('Endpoint saved').waitFor();
  await page.getByText('50 deliveries a second').waitFor();
  const shown = (
    await sys.call<{ description: string; rate_limit: number; events: string[] }>(
      team.api_key,
      'GET',
      `/v1/webhooks/${hook.id}`,
    )
  ).body.data;
  expect(shown).toMatchObject({ description: 'Portal receiver, limited', rate_limit: 50, events: ['client.created'] });
  await shot('5-edited');
});

test('when the session is revoked, or an expired one is opened, then the page says the session has ended and shows no data', async () => {
  const revoked = await openSession();
  const other = await browser.newPage({ viewport: VIEWPORT });
  try {
    await other.goto(revoked.url);
    await other.getByRole('button', { name: `Manage ${hook.url}` }).waitFor();
    expect((await sys.call(team.api_key, 'DELETE', `/v1/webhooks/portal-sessions/${revoked.id}`)).status).toBe(200);
    await other.waitForTimeout(1100);
    await other.getByRole('button', { name: 'Event catalog' }).click();
    await other.getByRole('heading', { name: 'This portal session has ended' }).waitFor();
    expect(await other.innerText('body')).not.toContain(hook.url);
    await other.screenshot({ path: join(ARTIFACTS, '6-revoked.png'), fullPage: true });

    const mongo = new MongoClient(sys.env.MONGO_URL!);
    const token = generatePortalToken();
    const id = 'psn_01jd3k0000000000000000009';
    try {
      const at = Date.now();
      await mongo
        .db(`${sys.env.MONGO_DB_PREFIX}gateway`)
        .collection('portal_sessions')
        .insertOne({
          _id: id as never,
          team_id: team.team.id,
          user_id: team.user.id,
          digest: keyDigest(token),
          created_at: new Date(at - 7_200_000),
          expires_at: new Date(at - 3_600_000),
          revoked_at: null,
        });
    } finally {
      await mongo.close();
    }
    await other.goto(`http://127.0.0.1:${sys.base}/portal?session=${id}#token=${token}`);
    await other.getByRole('heading', { name: 'This portal session has ended' }).waitFor();
    expect(await other.innerText('body')).not.toContain(hook.url);
    await other.screenshot({ path: join(ARTIFACTS, '6-expired.png'), fullPage: true });
  } finally {
    await other.close();
  }
});

test('when the event catalog is opened, then every event is listed with its example and schema', async () => {
  await page.getByRole('button', { name: 'Event catalog' }).click();
  await page.getByRole('heading', { name: 'Event catalog' }).waitFor();
  const types = (await sys.call<{ type: string }[]>(team.api_key, 'GET', '/v1/webhooks/event-types')).body.data;
  expect(await page.locator('.catalog > li').count()).toBe(types.length);
  await page.locator('.catalog summary', { hasText: 'client.created' }).click();
  await expect(page.locator('.catalog details[open] pre').first().innerText()).resolves.toContain(
    '"type": "client.created"',
  );
  await shot('7-catalog');
  expect(requested.filter((url) => !url.startsWith(`http://127.0.0.1:${sys.base}/`))).toEqual([]);
});

test('when the endpoint is deleted on the page, after confirming, then it is gone from the list and the API', async () => {
  await page.getByRole('button', { name: 'Endpoints' }).click();
  await page.getByRole('button', { name: `Manage ${hook.url}` }).click();
  await page.getByRole('button', { name: 'Delete' }).click();
  await status().getByText('Endpoint deleted').waitFor();
  await page.getByText('No endpoint yet.').waitFor();
  expect((await sys.call(team.api_key, 'GET', '/v1/webhooks')).body.data).toEqual([]);
  await shot('8-deleted');
  expect(pageErrors).toEqual([]);
});
