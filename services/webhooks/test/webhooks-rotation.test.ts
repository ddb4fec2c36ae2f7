// Secret rotation through the gateway of a running system, with real deliveries to
// an HTTPS receiver verified by the standardwebhooks package: during the overlap a
// delivery verifies with the new secret and with the old one; an old secret given 0
// hours, expired, or the fourth one back, no longer verifies alone; old secrets are
// stored sealed and leave storage once expired, and the read shapes show when, never what.
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { expectError } from '@lpm/test-kit/api';
import type { HttpsReceiver, ReceivedRequest } from '@lpm/test-kit/https-receiver';
import type { IssuedTeam, RunningSystem } from '@lpm/test-kit/running-system';
import { waitFor } from '@lpm/test-kit/wait';
import { receivingSystemForSuite, withStoredWebhooks } from './receiving-system.ts';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const HOUR = 3_600_000;

let sys: RunningSystem;
let receiver: HttpsReceiver;

const call = (team: IssuedTeam, method: string, path: string, body?: unknown) =>
  sys.call(team.api_key, method, path, body);

async function subscribe(team: IssuedTeam, path: string): Promise<{ id: string; secret: string }> {
  const res = await call(team, 'POST', '/v1/webhooks', { url: `${receiver.url}${path}`, events: ['client.created'] });
  expect(res.status).toBe(201);
  return res.body.data as { id: string; secret: string };
}

async function rotate(
  team: IssuedTeam,
  id: string,
  body?: unknown,
): Promise<{ id: string; secret: string; secret_rotated_at: string; previous_secret_expires_at: string | null }> {
  const res = await call(team, 'POST', `/v1/webhooks/${id}/secret/rotate`, body);
  expect(res.status).toBe(200);
  return res.body.data as {
    id: string;
    secret: string;
    secret_rotated_at: string;
    previous_secret_expires_at: string | null;
  };
}

/** A client.created for the team, as its receiver got it. */
async function delivered(team: IssuedTeam, name: string): Promise<ReceivedRequest> {
  const client = (await call(team, 'POST', '/v1/clients', { type: 'PF', name })).body.data as { id: string };
  await waitFor(`the delivery of ${name}`, () => receiver.requests.some((r) => r.body.includes(client.id)));
  return receiver.requests.find((r) => r.body.includes(client.id))!;
}

const verifies = (secret: string, req: ReceivedRequest) => {
  try {
    new Webhook(secret).verify(req.body, req.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
};
const signatures = (req: ReceivedRequest) => String(req.headers['webhook-signature']).split(' ');
const serviceSignature = (secret: string, req: ReceivedRequest) =>
  createHmac('sha256', secret)
    .update(`${String(req.headers['x-service-timestamp'])}.${req.body}`)
    .digest('hex');

receivingSystemForSuite('webhooksrotate', (started) => ({ sys, receiver } = started));

test('when the secret is rotated, then the new one is shown once, and during the overlap a delivery verifies with the new secret and with the old one', async () => {
  const team = sys.team('Rotação');
  const hook = await subscribe(team, '/rotate/overlap');
  const before = Date.now();
  const rotated = await rotate(team, hook.id);
  expect(rotated).toEqual({
    id: hook.id,
    secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    secret_rotated_at: expect.stringMatching(ISO_MS),
    previous_secret_expires_at: expect.stringMatching(ISO_MS),
  });
  expect(rotated.secret).not.toBe(hook.secret);
  // No body: the old secret keeps signing for 24 hours.
  const expiresIn = Date.parse(rotated.previous_secret_expires_at!) - Date.parse(rotated.secret_rotated_at);
  expect(expiresIn).toBe(24 * HOUR);
  expect(Date.parse(rotated.secret_rotated_at)).toBeGreaterThanOrEqual(before - 1000);

  const req = await delivered(team, 'Ana Rotação');
  expect(signatures(req)).toHaveLength(2);
  expect(verifies(rotated.secret, req)).toBe(true);
  expect(verifies(hook.secret, req)).toBe(true);
  expect(req.headers['x-service-signature']).toBe(serviceSignature(rotated.secret, req));

  const shown = (await call(team, 'GET', `/v1/webhooks/${hook.id}`)).body.data as Record<string, unknown>;
  expect(shown).toMatchObject({
    id: hook.id,
    secret_rotated_at: rotated.secret_rotated_at,
    previous_secret_expires_at: rotated.previous_secret_expires_at,
  });
  const listed = ((await call(team, 'GET', '/v1/webhooks')).body.data as Record<string, unknown>[]).find(
    (w) => w.id === hook.id,
  )!;
  expect(listed).toEqual(shown);
  for (const text of [JSON.stringify(shown), JSON.stringify(listed)]) {
    for (const secret of [hook.secret, rotated.secret]) expect(text).not.toContain(secret.slice('whsec_'.length));
    expect(text).not.toContain('secret"');
  }
});

test('when rotated, then neither the new secret nor the old one is stored in clear', async () => {
  const team = sys.team('Selada');
  const hook = await subscribe(team, '/rotate/sealed');
  const rotated = await rotate(team, hook.id, { previous_expires_in_hours: 72 });
  const stored = await withStoredWebhooks(sys, (webhooks) => webhooks.findOne({ _id: hook.id }));
  expect(stored?.previous_secrets).toHaveLength(1);
  const text = JSON.stringify(stored);
  for (const secret of [hook.secret, rotated.secret]) {
    expect(text).not.toContain(secret);
    expect(text).not.toContain(secret.slice('whsec_'.length));
  }
});

test('when an old secret has expired, then it no longer signs, and the next write drops it from storage', async () => {
  const team = sys.team('Vencida');
  const hook = await subscribe(team, '/rotate/lapsed');
  const rotated = await rotate(team, hook.id, { previous_expires_in_hours: 72 });
  await withStoredWebhooks(sys, async (webhooks) => {
    // Its expiry passed: as if 72 hours had gone by.
    await webhooks.updateOne(
      { _id: hook.id },
      { $set: { 'previous_secrets.0.expires_at': new Date(Date.now() - 1000) } },
    );
    expect((await call(team, 'GET', `/v1/webhooks/${hook.id}`)).body.data).toMatchObject({
      previous_secret_expires_at: null,
    });

    const req = await delivered(team, 'Eva Vencida');
    expect(signatures(req)).toHaveLength(1);
    expect(verifies(hook.secret, req)).toBe(false);
    expect(verifies(rotated.secret, req)).toBe(true);

    expect((await webhooks.findOne({ _id: hook.id }))?.previous_secrets).toHaveLength(1);
    expect((await call(team, 'PUT', `/v1/webhooks/${hook.id}`, { description: 'renamed' })).status).toBe(200);
    expect((await webhooks.findOne({ _id: hook.id }))?.previous_secrets).toEqual([]);
  });
});

test('when the old secret is given 0 hours, then a delivery fails verification with the old secret alone and passes with the new one', async () => {
  const team = sys.team('Expirada');
  const hook = await subscribe(team, '/rotate/expired');
  const rotated = await rotate(team, hook.id, { previous_expires_in_hours: 0 });
  expect(rotated.previous_secret_expires_at).toBeNull();

  const req = await delivered(team, 'Bia Expirada');
  expect(signatures(req)).toHaveLength(1);
  expect(verifies(hook.secret, req)).toBe(false);
  expect(verifies(rotated.secret, req)).toBe(true);
  expect((await call(team, 'GET', `/v1/webhooks/${hook.id}`)).body.data).toMatchObject({
    secret_rotated_at: rotated.secret_rotated_at,
    previous_secret_expires_at: null,
  });
});

test('when rotated four times, then the three most recent old secrets sign beside the new one and the first secret no longer verifies', async () => {
  const team = sys.team('Quatro');
  const hook = await subscribe(team, '/rotate/four');
  const secrets = [hook.secret];
  for (const hours of [72, 48, 24, 1])
    secrets.push((await rotate(team, hook.id, { previous_expires_in_hours: hours })).secret);
  const [first, ...kept] = secrets;

  const req = await delivered(team, 'Caio Quatro');
  expect(signatures(req)).toHaveLength(4);
  expect(verifies(first, req)).toBe(false);
  for (const secret of kept) expect(verifies(secret, req)).toBe(true);
  // The latest expiry among the old secrets still live: the one given 48 hours (the 72 went with the first secret).
  const shown = (await call(team, 'GET', `/v1/webhooks/${hook.id}`)).body.data as {
    secret_rotated_at: string;
    previous_secret_expires_at: string;
  };
  expect(Date.parse(shown.previous_secret_expires_at) - Date.parse(shown.secret_rotated_at)).toBeLessThanOrEqual(
    48 * HOUR,
  );
  expect(Date.parse(shown.previous_secret_expires_at) - Date.parse(shown.secret_rotated_at)).toBeGreaterThan(47 * HOUR);
});

test('when previous_expires_in_hours is out of range or not an integer, or an unknown field is sent, then 400 and the secret is unchanged', async () => {
  const team = sys.team('Inválida');
  const hook = await subscribe(team, '/rotate/invalid');
  const path = `/v1/webhooks/${hook.id}/secret/rotate`;
  for (const hours of [-1, 73, 1.5, '24', null]) {
    expectError(
      await call(team, 'POST', path, { previous_expires_in_hours: hours }),
      400,
      'VALIDATION_ERROR',
      'previous_expires_in_hours must be an integer from 0 to 72',
    );
  }
  expectError(
    await call(team, 'POST', path, { previous_expires_in_hours: 1, secret: 'whsec_x' }),
    400,
    'VALIDATION_ERROR',
    'Unknown field: secret',
  );
  expectError(await call(team, 'POST', path, [1]), 400, 'VALIDATION_ERROR', 'Request body must be a JSON object');
  expect((await call(team, 'GET', `/v1/webhooks/${hook.id}`)).body.data).toMatchObject({
    secret_rotated_at: null,
    previous_secret_expires_at: null,
  });
  const req = await delivered(team, 'Davi Inválida');
  expect(signatures(req)).toHaveLength(1);
  expect(verifies(hook.secret, req)).toBe(true);
});

test("when the webhook is another team's or unknown, then rotate and get are 404 Webhook not found, and a key without admin scope is 403", async () => {
  const owner = sys.team('Dona');
  const other = sys.team('Outra');
  const hook = await subscribe(owner, '/rotate/other');
  for (const id of [hook.id, 'wh_01jd3k0000000000000000000', 'cli_01jd3k0000000000000000000']) {
    expectError(
      await call(other, 'POST', `/v1/webhooks/${id}/secret/rotate`, {}),
      404,
      'NOT_FOUND',
      'Webhook not found',
    );
    expectError(await call(other, 'GET', `/v1/webhooks/${id}`), 404, 'NOT_FOUND', 'Webhook not found');
  }
  const reader = sys.admin(
    'key',
    'create',
    '--team',
    owner.team.id,
    '--user',
    owner.user.id,
    '--scopes',
    'read,write',
  ).api_key;
  expectError(
    await sys.call(reader, 'POST', `/v1/webhooks/${hook.id}/secret/rotate`, {}),
    403,
    'FORBIDDEN',
    'Insufficient permissions',
  );
  expect((await call(owner, 'GET', `/v1/webhooks/${hook.id}`)).body.data).toMatchObject({ secret_rotated_at: null });
});
