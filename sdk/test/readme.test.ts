// The README's example, run as written against a running system: it creates a case
// and pages through the cases, and its onDelivery verifies the real case.created
// delivery the webhooks service signed; one byte changed in the body, the
// timestamp or the signature is refused, and so is a stale or future timestamp.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { startHttpsReceiver, type HttpsReceiver } from '@lpm/test-kit/https-receiver';
import { waitFor } from '@lpm/test-kit/wait';
import { deliveryBody, deliveryNow, signedAt } from '@lpm/test-kit/signed-delivery';
import { startRunningSystem, type IssuedTeam, type RunningSystem } from '@lpm/test-kit/running-system';
import { verifyWebhook, WebhookVerificationError } from '../src/index.ts';

let sys: RunningSystem;
let receiver: HttpsReceiver;
let t: IssuedTeam;
let secret: string;

/** The README's ```ts block, as a module of this package (so `@lpm/sdk` resolves). */
const example = new URL(`../readme-example-${process.pid}.ts`, import.meta.url);

beforeAll(async () => {
  receiver = await startHttpsReceiver();
  sys = await startRunningSystem('sdkreadme', { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
  t = sys.team('Rocha Advogados');
  const hook = await sys.call(t.api_key, 'POST', '/v1/webhooks', {
    url: `${receiver.url}/lpm`,
    events: ['case.created'],
  });
  secret = hook.body.data.secret;
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  writeFileSync(example, /```ts\n([\s\S]*?)```/.exec(readme)![1]);
}, 120_000);

afterAll(async () => {
  rmSync(example, { force: true });
  await sys?.stop();
  await receiver?.close();
});

type Headers = Record<string, string | string[] | undefined>;

test("when the README's example runs against the system, then it creates and lists cases and verifies the real delivery, and a changed byte is refused", async () => {
  Object.assign(process.env, {
    LPM_URL: `http://127.0.0.1:${sys.base}`,
    LPM_API_KEY: t.api_key,
    LPM_WEBHOOK_SECRET: secret,
  });
  const mod = (await import(example.href)) as {
    caseId: string;
    titles: string[];
    onDelivery(raw: string, headers: Headers): { type: string; data: { object: { id: string } } };
  };
  expect(mod.caseId).toMatch(/^case_/);
  expect(mod.titles).toContain('Reclamação trabalhista - Maria Santos');

  const delivery = () => receiver.requests.find((r) => r.path === '/lpm' && r.body.includes(mod.caseId));
  await waitFor('the case.created delivery', () => delivery() !== undefined, 30_000);
  const { body, headers } = delivery()!;
  const event = mod.onDelivery(body, headers);
  expect(event).toMatchObject({ type: 'case.created', data: { object: { id: mod.caseId } } });

  const flip = (s: string, i: number) => s.slice(0, i) + String.fromCharCode(s.charCodeAt(i) ^ 1) + s.slice(i + 1);
  const signature = String(headers['x-service-signature']);
  const timestamp = String(headers['x-service-timestamp']);
  const refused = (raw: string, h: Headers) => expect(() => mod.onDelivery(raw, h)).toThrow(WebhookVerificationError);
  refused(flip(body, body.indexOf(mod.caseId) + 6), headers);
  refused(body, { ...headers, 'x-service-timestamp': String(Number(timestamp) + 1) });
  refused(body, { ...headers, 'x-service-signature': flip(signature, 10) });
});

test('when a delivery is signed correctly but its timestamp is stale or in the future, then it is refused; within the tolerance it is accepted', () => {
  expect(verifyWebhook(deliveryBody, signedAt(-300), 'whsec_test', { now: deliveryNow }).type).toBe('case.created');
  expect(verifyWebhook(deliveryBody, new Headers(signedAt(299)), 'whsec_test', { now: deliveryNow }).type).toBe(
    'case.created',
  );
  expect(() => verifyWebhook(deliveryBody, signedAt(-301), 'whsec_test', { now: deliveryNow })).toThrow(
    'Timestamp outside the tolerance',
  );
  expect(() => verifyWebhook(deliveryBody, signedAt(301), 'whsec_test', { now: deliveryNow })).toThrow(
    'Timestamp outside the tolerance',
  );
  expect(() => verifyWebhook(deliveryBody, signedAt(0), 'whsec_other', { now: deliveryNow })).toThrow(
    'Signature mismatch',
  );
  expect(() => verifyWebhook(deliveryBody, {}, 'whsec_test', { now: deliveryNow })).toThrow(
    'Missing X-Service-Signature or X-Service-Timestamp',
  );
});
