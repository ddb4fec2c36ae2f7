// PUT and DELETE /v1/clients/{id} and the internal credential, in process
// (creates: clients-write.test.ts).
import { INTERNAL_TOKEN } from '@lpm/test-kit/service-under-test';
import { identity } from '@lpm/test-kit/teams';
import { expectError } from '@lpm/test-kit/api';
import { expectDuplicate, expectInvalid, expectNotFound, expectRefused } from '@lpm/test-kit/error-answers';
import { clientsWriteSuite, ISO_MS, post, put, sut, who, withActiveCases } from './clients-write-suite.ts';

clientsWriteSuite();

describe('PUT /v1/clients/{id}', () => {
  test('when some fields are sent, then only they, the id and updated_at come back', async () => {
    const created = (await post({ type: 'PF', name: 'Ana', segment: 'regular' })).json().data;
    const res = await put(created.id, { phone: '+55 21 3333-4444', segment: 'premium', notes: null });
    expect(res.statusCode).toBe(200);
    const data = res.json().data;
    expect(Object.keys(data).sort()).toEqual(['id', 'notes', 'phone', 'segment', 'updated_at']);
    expect(data).toMatchObject({ id: created.id, phone: '+55 21 3333-4444', segment: 'premium', notes: null });
    expect(data.updated_at).toMatch(ISO_MS);
    expect(data.updated_at > created.updated_at).toBe(true);
    const read = (await sut.call(who, { method: 'GET', url: `/v1/clients/${created.id}` })).json().data;
    expect(read).toMatchObject({
      phone: '+55 21 3333-4444',
      segment: 'premium',
      name: 'Ana',
      updated_at: data.updated_at,
    });
  });

  test('when different fields are changed at the same moment, then no change is lost', async () => {
    const id = (await post({ type: 'PF', name: 'Many' })).json().data.id;
    const changes: Record<string, string>[] = [
      { phone: '+55 1' },
      { whatsapp: '+55 2' },
      { notes: 'n' },
      { email: 'm@x.com' },
      { segment: 'vip' },
      { rg: '12' },
      { profession: 'p' },
      { nationality: 'br' },
    ];
    const results = await Promise.all(changes.map((c) => put(id, c)));
    expect(results.map((r) => r.statusCode)).toEqual(changes.map(() => 200));
    const read = (await sut.call(who, { method: 'GET', url: `/v1/clients/${id}` })).json().data;
    expect(read).toMatchObject(Object.assign({}, ...changes));
  });

  test('when the body is empty, then 400 No fields to update', async () => {
    const id = (await post({ type: 'PF', name: 'E' })).json().data.id;
    expectInvalid(await put(id, {}), 'No fields to update');
  });

  test('when the new CPF belongs to another client, then 422 Duplicate CPF', async () => {
    await post({ type: 'PF', name: 'A', cpf: '100.200.300-40' });
    const id = (await post({ type: 'PF', name: 'B' })).json().data.id;
    expectDuplicate(await put(id, { cpf: '100.200.300-40' }), 'Duplicate CPF');
  });

  test('when a PJ field is sent for a PF client, or a read-only field, then 400 Unknown field', async () => {
    const id = (await post({ type: 'PF', name: 'B' })).json().data.id;
    expectInvalid(await put(id, { trade_name: 'x' }), 'Unknown field: trade_name');
    expectInvalid(await put(id, { created_at: '2020-01-01' }), 'Unknown field: created_at');
  });

  test('when the type would change, then 422 and the client is unchanged', async () => {
    const id = (await post({ type: 'PF', name: 'B' })).json().data.id;
    const err = expectRefused(await put(id, { type: 'PJ' }), 'Client type cannot be changed');
    expect(err.details.reason).toBe('client_type_immutable');
  });

  test('when the client is unknown, then 404 Client not found', async () => {
    expectNotFound(await put('cli_01jd3kzzzzzzzzzzzzzzzzzzzz', { name: 'x' }), 'Client not found');
  });

  test('when status inactive is sent, then the client is deactivated, and status active reactivates it', async () => {
    const id = (await post({ type: 'PF', name: 'R' })).json().data.id;
    expect((await put(id, { status: 'inactive' })).json().data).toMatchObject({ id, status: 'inactive' });
    const inactive = (await sut.call(who, { method: 'GET', url: `/v1/clients/${id}` })).json().data;
    expect(inactive.status).toBe('inactive');
    expect(inactive.deactivated_at).toMatch(ISO_MS);
    expect((await put(id, { status: 'active' })).json().data).toMatchObject({ id, status: 'active' });
    const active = (await sut.call(who, { method: 'GET', url: `/v1/clients/${id}` })).json().data;
    expect(active).toMatchObject({ status: 'active', deactivated_at: null });
  });

  test('when status is not active or inactive, then 400 Invalid status', async () => {
    const id = (await post({ type: 'PF', name: 'R' })).json().data.id;
    expectInvalid(await put(id, { status: 'gone' }), 'Invalid status');
  });
});

describe('DELETE /v1/clients/{id}', () => {
  test('when the client has no active cases, then it becomes inactive, and a second DELETE answers the same', async () => {
    const id = (await post({ type: 'PF', name: 'D' })).json().data.id;
    const res = await sut.call(who, {
      method: 'DELETE',
      url: `/v1/clients/${id}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.statusCode).toBe(200);
    const data = res.json().data;
    expect(Object.keys(data).sort()).toEqual(['deactivated_at', 'id', 'status']);
    expect(data).toMatchObject({ id, status: 'inactive' });
    expect(data.deactivated_at).toMatch(ISO_MS);
    const again = await sut.call(who, { method: 'DELETE', url: `/v1/clients/${id}` });
    expect(again.json().data).toEqual(data);
  });

  test('when the client has active cases, then 422 Client has active cases, by DELETE and by PUT', async () => {
    const id = (await post({ type: 'PF', name: 'Busy' })).json().data.id;
    withActiveCases.add(id);
    const err = expectRefused(
      await sut.call(who, { method: 'DELETE', url: `/v1/clients/${id}` }),
      'Client has active cases',
    );
    expect(err.details.reason).toBe('client_has_active_cases');
    expectRefused(await put(id, { status: 'inactive' }), 'Client has active cases');
    expect((await sut.call(who, { method: 'GET', url: `/v1/clients/${id}` })).json().data.status).toBe('active');
  });

  test('when the client is of another team, then 404', async () => {
    const id = (await post({ type: 'PF', name: 'D' })).json().data.id;
    expectNotFound(await sut.call(identity(), { method: 'DELETE', url: `/v1/clients/${id}` }), 'Client not found');
  });
});

describe('the internal credential', () => {
  test('when a request has no internal credential or a wrong one, then 401 and identity headers are not trusted', async () => {
    const bare = await sut.app.inject({
      method: 'GET',
      url: '/v1/clients',
      headers: { 'x-lpm-team-id': who.teamId, 'x-lpm-user-id': who.userId },
    });
    expectError(bare, 401, 'UNAUTHORIZED', 'Missing or invalid internal credential');
    const wrong = await sut.app.inject({
      method: 'GET',
      url: '/v1/clients',
      headers: {
        'x-lpm-internal-token': `${INTERNAL_TOKEN}x`,
        'x-lpm-team-id': who.teamId,
        'x-lpm-user-id': who.userId,
      },
    });
    expect(wrong.statusCode).toBe(401);
  });

  test('when /health is asked without a credential, then it answers 200', async () => {
    const res = await sut.app.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(200);
  });

  test('when a route does not exist, then 404 Route not found with a request id', async () => {
    const res = await sut.call(who, { method: 'GET', url: '/v1/nothing', headers: { 'x-request-id': 'abc-123' } });
    expectNotFound(res, 'Route not found');
    expect(res.headers['x-request-id']).toBe('abc-123');
  });
});
