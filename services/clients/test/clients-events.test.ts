import type { DomainEvent } from '@lpm/shared/events';
import type { TcpProxy } from '@lpm/test-kit/tcp-proxy';
import { waitFor } from '@lpm/test-kit/wait';
import { identity } from '@lpm/test-kit/teams';
import { relayedClientsSuite, type ClientsUnderTest } from './helper.ts';

let proxy: TcpProxy;
let sut: ClientsUnderTest;
let received: DomainEvent[];

relayedClientsSuite(
  'clients-events',
  (started) => {
    sut = started.sut;
    proxy = started.broker.proxy;
    received = started.tap.events;
  },
  { broker: { reconnectMinMs: 100, reconnectMaxMs: 500 }, relay: { intervalMs: 200 } },
);

beforeEach(() => {
  received.length = 0;
});

test('when a client is created, updated and deactivated, then exactly one event per write arrives, in order, in the envelope', async () => {
  const who = identity();
  const created = (
    await sut.call(who, { method: 'POST', url: '/v1/clients', payload: { type: 'PF', name: 'Eva', phone: '+55 1' } })
  ).json().data;
  await sut.call(who, { method: 'PUT', url: `/v1/clients/${created.id}`, payload: { phone: '+55 2', name: 'Eva' } });
  await sut.call(who, { method: 'DELETE', url: `/v1/clients/${created.id}` });
  await waitFor('three events', () => received.length >= 3);
  await new Promise((r) => setTimeout(r, 300));
  expect(received.map((e) => e.type)).toEqual(['client.created', 'client.updated', 'client.deactivated']);
  const [c, u, d] = received;
  for (const e of received) {
    expect(e.id).toMatch(/^evt_[0-9a-z]{26}$/);
    expect(e).toMatchObject({ api_version: 'v1', team_id: who.teamId, actor_id: who.userId });
    expect(e.created_at).toMatch(/Z$/);
  }
  expect(new Set(received.map((e) => e.id)).size).toBe(3);
  expect(c.data).toEqual({ object: created, previous_attributes: null });
  expect(u.data.previous_attributes).toEqual({ phone: '+55 1' });
  expect(u.data.object).toMatchObject({ id: created.id, phone: '+55 2', name: 'Eva', status: 'active' });
  expect(d.data.previous_attributes).toEqual({ status: 'active', deactivated_at: null });
  expect(d.data.object).toMatchObject({ id: created.id, status: 'inactive' });
});

test('when the broker is unreachable, then writes still succeed and every event is published once it is back', async () => {
  const who = identity();
  proxy.cut();
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const res = await sut.call(who, {
      method: 'POST',
      url: '/v1/clients',
      payload: { type: 'PJ', name: `Offline ${i}` },
    });
    expect(res.statusCode).toBe(201);
    ids.push(res.json().data.id);
  }
  await new Promise((r) => setTimeout(r, 700));
  expect(received).toHaveLength(0);
  proxy.restore();
  await waitFor('five events', () => received.length >= 5);
  await new Promise((r) => setTimeout(r, 1000));
  expect(received.map((e) => (e.data.object as { id: string }).id).sort()).toEqual([...ids].sort());
  expect(new Set(received.map((e) => e.id)).size).toBe(5);
});

test('when a PUT changes nothing, then no event is published', async () => {
  const who = identity();
  const created = (
    await sut.call(who, { method: 'POST', url: '/v1/clients', payload: { type: 'PF', name: 'Same' } })
  ).json().data;
  await waitFor('the created event', () => received.length >= 1);
  const res = await sut.call(who, { method: 'PUT', url: `/v1/clients/${created.id}`, payload: { name: 'Same' } });
  expect(res.json().data).toEqual({ id: created.id, name: 'Same', updated_at: created.updated_at });
  await new Promise((r) => setTimeout(r, 700));
  expect(received.map((e) => e.type)).toEqual(['client.created']);
});
