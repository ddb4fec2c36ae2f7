// The contract as served: the document the gateway builds is the committed
// openapi/openapi.json (so a contract change shows in review), its YAML says the
// same, Redocly's recommended rules find nothing in it, and /docs renders every
// operation and event in a headless Chromium without a request leaving loopback.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { chromium } from 'playwright-core';
import { waitFor } from '@lpm/test-kit/wait';
import { documentText, generateDocument } from '../scripts/openapi.ts';
import { OPENAPI_PATH } from '@lpm/test-kit/contract';
import { EVENT_TYPES } from '../shared/src/events.ts';
import { startRunningSystem, type RunningSystem } from '@lpm/test-kit/running-system';
import type { JsonAnswer } from '@lpm/test-kit/json';

const root = fileURLToPath(new URL('..', import.meta.url));
/** Where tests leave files for a person to look at (the docs page screenshot). */
const ARTIFACTS = join(root, 'test-artifacts');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let sys: RunningSystem;

beforeAll(async () => {
  sys = await startRunningSystem('openapi');
}, 120_000);

afterAll(async () => {
  await sys?.stop();
});

const served = async () => {
  const res = await sys.request('/v1/openapi.json');
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, JsonAnswer>;
};

test('when the document is served, then it is the committed openapi/openapi.json, which npm run openapi writes', async () => {
  const committed = readFileSync(OPENAPI_PATH, 'utf8');
  expect(await served()).toEqual(JSON.parse(committed));
  expect(documentText(await generateDocument())).toBe(committed);
});

test('when the document is asked for as YAML, then it says the same', async () => {
  const res = await sys.request('/v1/openapi.yaml');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/yaml/);
  expect(parse(await res.text())).toEqual(await served());
});

test('when Redocly CLI lints the document with its recommended rules, then it finds no error and no warning but those ignored by name', async () => {
  // The committed document, which the test above holds equal to the served one: the
  // problems ignored on purpose are named, with their reason, by its path in
  // .redocly.lint-ignore.yaml.
  const lint = spawnSync(
    join(root, 'node_modules/.bin/redocly'),
    ['lint', 'openapi/openapi.json', '--config', join(root, 'redocly.yaml'), '--format', 'json'],
    {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    },
  );
  const report = JSON.parse(lint.stdout) as {
    totals: { errors: number; warnings: number };
    problems: { ruleId: string; message: string }[];
  };
  expect(report.problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
  expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  expect(lint.status).toBe(0);
});

test('when /docs is opened in headless Chromium, then every operation and webhook event is on the page and no request leaves loopback', async () => {
  const doc = await served();
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const requested: string[] = [];
    page.on('request', (r) => requested.push(r.url()));
    const res = await page.goto(`http://127.0.0.1:${sys.base}/docs`, { waitUntil: 'networkidle' });
    expect(res?.status()).toBe(200);
    const summaries = Object.values(doc.paths as Record<string, Record<string, { summary: string }>>).flatMap((item) =>
      Object.values(item).map((op) => op.summary),
    );
    const events = Object.keys(doc.webhooks);
    expect(summaries.length).toBeGreaterThan(40);
    expect(events).toHaveLength(EVENT_TYPES.length);
    const missing = async () => {
      const text = await page.innerText('body');
      return [...summaries, ...events].filter((t) => !text.includes(t));
    };
    await waitFor('every operation and event rendered', async () => (await missing()).length === 0, 30_000).catch(
      () => undefined,
    );
    expect(await missing()).toEqual([]);
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'docs-page.png') });
    expect(requested.filter((url) => !/^(data:|blob:|http:\/\/127\.0\.0\.1:\d+\/)/.test(url))).toEqual([]);
  } finally {
    await browser.close();
  }
});
