// The event catalog through the gateway of a running system: what it answers is
// the shared catalog and what the served document's webhooks section says, it
// needs the admin scope, and it leaves GET /v1/webhooks/{id} reachable.
import { expectError } from '@lpm/test-kit/api';
import type { JsonAnswer } from '@lpm/test-kit/json';
import { startRunningSystem, type IssuedTeam, type RunningSystem } from '@lpm/test-kit/running-system';
import { DOCUMENT_COMPONENTS, eventCatalog } from '@lpm/shared/webhook-catalog';

let sys: RunningSystem;
let t: IssuedTeam;

beforeAll(async () => {
  sys = await startRunningSystem('webhookevents');
  t = sys.team('Catalogo');
}, 120_000);

afterAll(async () => {
  await sys?.stop();
});

test('when an admin key lists the event types, then 200 answers the catalog without a pagination block, as the served document describes each event', async () => {
  const res = await sys.call(t.api_key, 'GET', '/v1/webhooks/event-types');
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ success: true, data: JSON.parse(JSON.stringify(eventCatalog())) });

  const doc = (await (await sys.request('/v1/openapi.json')).json()) as JsonAnswer;
  const entries = res.body.data as JsonAnswer[];
  expect(entries.map((e) => e.type)).toEqual(Object.keys(doc.webhooks));
  for (const entry of entries) {
    const post = doc.webhooks[entry.type].post;
    expect(post.description.startsWith(`${entry.description}\n\n`)).toBe(true);
    const media = post.requestBody.content['application/json'];
    expect(media.example).toEqual(entry.example);
    const component = doc.components.schemas[media.schema.$ref.replace('#/components/schemas/', '')];
    expect(entry.schema).toEqual(
      JSON.parse(JSON.stringify(component).replaceAll('"#/components/schemas/', `"${DOCUMENT_COMPONENTS}`)),
    );
  }
});

test('when a key without the admin scope lists the event types, then 403 Insufficient permissions', async () => {
  const readWrite = sys.admin(
    'key',
    'create',
    '--team',
    t.team.id,
    '--user',
    t.user.id,
    '--scopes',
    'read,write',
  ).api_key;
  expectError(
    await sys.call(readWrite, 'GET', '/v1/webhooks/event-types'),
    403,
    'FORBIDDEN',
    'Insufficient permissions',
  );
});

test('when a webhook id is asked for beside the catalog, then GET /v1/webhooks/{id} answers it', async () => {
  for (const id of ['whk_x', 'wh_01jd3k0000000000000000000', 'event-type']) {
    expectError(await sys.call(t.api_key, 'GET', `/v1/webhooks/${id}`), 404, 'NOT_FOUND', 'Webhook not found');
  }
});
