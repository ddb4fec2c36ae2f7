// The whole system as an operator runs it: `npm start`'s launcher, the operator
// CLI, and requests through the gateway to the services.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { isListening } from '../scripts/local-store.ts';
import { SERVICE_NAMES, type ServiceName } from '../shared/src/service/names.ts';
import { servicePort } from '../shared/src/service/port-layout.ts';
import { teamCreateArgs } from '@lpm/test-kit/cli';
import { startRunningSystem, type RunningSystem } from '@lpm/test-kit/running-system';

// The launcher starts the services that have a server (gateway/test/proxy.test.ts: the rest get 503).
const deployed = SERVICE_NAMES.filter((name) =>
  existsSync(resolve(import.meta.dirname, `../services/${name}/src/server.ts`)),
);

/** The public paths of each service, as the interface spec lists them. */
const PUBLIC_PATHS: Record<ServiceName, string[]> = {
  deals: [
    '/v1/deals',
    '/v1/deals/summary',
    '/v1/deals/{id}',
    '/v1/deals/{id}/lost',
    '/v1/deals/{id}/phase',
    '/v1/deals/{id}/won',
  ],
  clients: ['/v1/clients', '/v1/clients/{id}', '/v1/clients/{id}/cases'],
  cases: ['/v1/cases', '/v1/cases/{id}', '/v1/cases/{id}/activities', '/v1/cases/{id}/timeline'],
  activities: [
    '/v1/activities',
    '/v1/activities/overdue',
    '/v1/activities/{id}',
    '/v1/activities/{id}/complete',
    '/v1/deadlines/compute',
  ],
  financial: ['/v1/financial', '/v1/financial/overdue', '/v1/financial/summary', '/v1/financial/{id}'],
  webhooks: [
    '/v1/webhooks',
    '/v1/webhooks/{id}',
    '/v1/webhooks/{id}/deliveries',
    '/v1/webhooks/{id}/deliveries/{delivery_id}/retry',
    '/v1/webhooks/{id}/secret/rotate',
    '/v1/webhooks/{id}/test',
    '/v1/webhooks/{id}/recover',
    '/v1/webhooks/{id}/recoveries/{recovery_id}',
    '/v1/webhooks/event-types',
  ],
  publications: ['/v1/publications', '/v1/publications/sync', '/v1/publications/{id}'],
};

let sys: RunningSystem;

type Envelope<T> = { data: T; error: { code: string; message: string } };
const json = async <T = Record<string, string> & { id: string }>(res: Response) => (await res.json()) as Envelope<T>;
const gateway = (path: string, init: RequestInit & { key?: string } = {}) => sys.request(path, init);
const admin = (...args: string[]) => sys.admin(...args);

beforeAll(async () => {
  sys = await startRunningSystem('e2e');
}, 90_000);

afterAll(async () => {
  if (sys.launcher.exitCode === null) sys.launcher.kill('SIGKILL');
});

test('when the system is started, then a team created with the CLI can create and read a client through the gateway', async () => {
  const team = admin(
    ...teamCreateArgs({
      name: 'Silva Advogados',
      plan: 'starter',
      ownerName: 'Ana Silva',
      ownerEmail: 'ana@silva.adv.br',
    }),
  );
  expect(team.api_key).toMatch(/^lpk_[0-9A-Za-z]{40}$/);

  const created = await gateway('/v1/clients', {
    method: 'POST',
    key: team.api_key,
    body: JSON.stringify({ type: 'PF', name: 'José da Silva', cpf: '123.456.789-00' }),
  });
  expect(created.status).toBe(201);
  expect(created.headers.get('x-request-id')).toBeTruthy();
  expect(created.headers.get('ratelimit-limit')).toBe('60');
  const client = (await json(created)).data;
  expect(client).toMatchObject({
    type: 'PF',
    name: 'José da Silva',
    cpf: '123.456.789-00',
    status: 'active',
    cases_count: 0,
  });

  const read = await gateway(`/v1/clients/${client.id}`, { key: team.api_key });
  expect(read.status).toBe(200);
  expect((await json(read)).data).toEqual(client);

  const updated = await gateway(`/v1/clients/${client.id}`, {
    method: 'PUT',
    key: team.api_key,
    body: JSON.stringify({ segment: 'vip' }),
  });
  expect(updated.status).toBe(200);
  expect((await json(updated)).data).toMatchObject({ id: client.id, segment: 'vip' });

  // The spec asks for Content-Type: application/json on every request, bodiless DELETE included.
  const deleted = await gateway(`/v1/clients/${client.id}`, { method: 'DELETE', key: team.api_key });
  expect(deleted.status).toBe(200);
  expect((await json(deleted)).data).toMatchObject({ id: client.id, status: 'inactive' });

  const listed = await gateway('/v1/clients?status=inactive&search=jose', { key: team.api_key });
  expect((await json<{ id: string }[]>(listed)).data.map((c) => c.id)).toEqual([client.id]);
});

test('when a POST is retried with its Idempotency-Key through the gateway, then the same client comes back, replayed', async () => {
  const t = admin(...teamCreateArgs({ name: 'I', plan: 'professional', ownerName: 'I', ownerEmail: 'i@i.com' }));
  const send = () =>
    gateway('/v1/clients', {
      method: 'POST',
      key: t.api_key,
      headers: { 'idempotency-key': 'create-ana-1' },
      body: JSON.stringify({ type: 'PF', name: 'Ana' }),
    });
  const first = await send();
  const retry = await send();
  expect(retry.status).toBe(201);
  expect(retry.headers.get('idempotent-replayed')).toBe('true');
  expect((await json(retry)).data.id).toBe((await json(first)).data.id);
});

test('when another team sends identity headers naming the first team, then they are ignored', async () => {
  const a = admin(...teamCreateArgs({ name: 'A', plan: 'professional', ownerName: 'A', ownerEmail: 'a@a.com' }));
  const b = admin(...teamCreateArgs({ name: 'B', plan: 'professional', ownerName: 'B', ownerEmail: 'b@b.com' }));
  const id = (
    await json(
      await gateway('/v1/clients', {
        method: 'POST',
        key: a.api_key,
        body: JSON.stringify({ type: 'PJ', name: 'Only A' }),
      }),
    )
  ).data.id;
  const forged = await gateway(`/v1/clients/${id}`, {
    key: b.api_key,
    headers: { 'x-lpm-team-id': a.team.id, 'x-lpm-user-id': a.user.id, 'x-lpm-scopes': 'read,write,admin' },
  });
  expect(forged.status).toBe(404);
  expect((await json(forged)).error.message).toBe('Client not found');
});

test('when the OpenAPI document is asked of the gateway, then it holds every public route of the deployed services, no internal one, and the bearer scheme', async () => {
  const res = await fetch(`http://127.0.0.1:${sys.base}/v1/openapi.json`);
  expect(res.status).toBe(200);
  const doc = (await res.json()) as {
    paths: Record<string, Record<string, unknown>>;
    components: { securitySchemes: Record<string, unknown> };
  };
  // The gateway's own: team settings and the webhooks portal's sessions.
  const own = ['/v1/settings', '/v1/webhooks/portal-sessions', '/v1/webhooks/portal-sessions/{id}'];
  expect(Object.keys(doc.paths).sort()).toEqual([...own, ...deployed.flatMap((name) => PUBLIC_PATHS[name])].sort());
  expect(Object.keys(doc.paths['/v1/clients/{id}']).sort()).toEqual(['delete', 'get', 'put']);
  expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
});

test('when a request goes straight to the clients service, then it is refused without the internal credential', async () => {
  const res = await fetch(`http://127.0.0.1:${servicePort(sys.base, 'clients')}/v1/clients`, {
    headers: { 'x-lpm-team-id': 'team_x', 'x-lpm-user-id': 'user_x', 'x-lpm-scopes': 'read' },
  });
  expect(res.status).toBe(401);
  expect((await json(res)).error.code).toBe('UNAUTHORIZED');
});

test('when the launcher gets SIGTERM, then every process it started stops and it exits 0', async () => {
  const exited = new Promise<number | null>((done) => sys.launcher.once('exit', (code) => done(code)));
  sys.launcher.kill('SIGTERM');
  expect(await exited).toBe(0);
  expect(await isListening(sys.base)).toBe(false);
  expect(await isListening(servicePort(sys.base, 'clients'))).toBe(false);
});
