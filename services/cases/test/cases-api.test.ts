// The cases endpoints through the gateway of a running system, with real keys:
// create, read, update and archive (lists, timeline and scopes: cases-lists.test.ts).
import { expectDuplicate, expectInvalid, expectNotFound, expectRequiredText } from '@lpm/test-kit/error-answers';
import { testEachInvalid } from '@lpm/test-kit/error-tables';
import { call, casesSuite, client, createCase, ISO_MS, lawyer, other, t, tap } from './cases-suite.ts';

casesSuite('casesapi');

describe('POST /v1/cases', () => {
  test('when only a title is sent, then 201 returns the case ativo in the first kanban phase, media, with no counts', async () => {
    const res = await call('POST', '/v1/cases', { title: 'Ação de cobrança' });
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({
      id: expect.stringMatching(/^case_[0-9a-z]{26}$/),
      title: 'Ação de cobrança',
      number: null,
      area: null,
      subject: null,
      phase: 'recebido',
      priority: 'media',
      status: 'ativo',
      client_id: null,
      responsible_id: null,
      sla_date: null,
      description: null,
      labels: [],
      metadata: {},
      activities_count: 0,
      documents_count: 0,
      archived_at: null,
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
  });

  test('when every field is sent, then the response gives the linked client and responsible as flat ids', async () => {
    const body = {
      title: 'Reclamação trabalhista',
      number: '0001234-56.2026.5.02.0001',
      area: 'Trabalhista',
      subject: 'Horas extras',
      phase: 'triagem',
      priority: 'alta',
      client_id: client.id,
      responsible_id: lawyer.id,
      sla_date: '2027-01-15',
      description: 'Cliente alega horas extras não pagas',
      labels: ['urgente'],
      metadata: { origem: 'indicação' },
    };
    const created = await createCase(body);
    expect(created).toMatchObject({ ...body, status: 'ativo', activities_count: 0, documents_count: 0 });
  });

  test('when the title is missing or blank, then 400 names the field', async () => {
    await expectRequiredText((body) => call('POST', '/v1/cases', body), 'title', { area: 'Cível' });
  });

  test('when the phase is not one of the team kanban, then 400 Invalid phase', async () => {
    const err = expectInvalid(await call('POST', '/v1/cases', { title: 'X', phase: 'lead' }), 'Invalid phase');
    expect(err.details).toMatchObject({ field: 'phase' });
  });

  test('when the priority is outside alta, media, baixa, then 400 Invalid priority', async () => {
    expectInvalid(await call('POST', '/v1/cases', { title: 'X', priority: 'urgente' }), 'Invalid priority');
  });

  test("when client_id is unknown, malformed or another team's, then 404 Client not found", async () => {
    const foreign = (await call('POST', '/v1/clients', { type: 'PF', name: 'Alheio' }, other.api_key)).body.data;
    for (const id of ['cli_01jd3k0000000000000000000', 'nope', foreign.id]) {
      expectNotFound(await call('POST', '/v1/cases', { title: 'X', client_id: id }), 'Client not found');
    }
  });

  test('when responsible_id is not a user of the team, then 404 User not found', async () => {
    for (const id of ['user_01jd3k0000000000000000000', other.user.id, 'x']) {
      expectNotFound(await call('POST', '/v1/cases', { title: 'X', responsible_id: id }), 'User not found');
    }
  });

  test('when the number is already used in the team, then 422 Duplicate case number; other teams and null numbers may repeat', async () => {
    await createCase({ title: 'A', number: 'INT-0001' });
    const err = expectDuplicate(
      await call('POST', '/v1/cases', { title: 'B', number: 'INT-0001' }),
      'Duplicate case number',
    );
    expect(err.details).toMatchObject({ reason: 'duplicate_case_number', field: 'number' });
    await createCase({ title: 'C', number: 'INT-0001' }, other.api_key);
    await createCase({ title: 'D', number: null });
    await createCase({ title: 'E', number: null });
  });

  test('when a read-only field, status or an unknown field is sent, then 400 Unknown field', async () => {
    for (const f of ['status', 'activities_count', 'id', 'color']) {
      const err = expectInvalid(await call('POST', '/v1/cases', { title: 'X', [f]: 'x' }), `Unknown field: ${f}`);
      expect(err.details).toEqual({ field: f, type: 'unknown' });
    }
  });

  test('when sla_date is not a real calendar day, then 400 with the date message', async () => {
    expectInvalid(
      await call('POST', '/v1/cases', { title: 'X', sla_date: '2026-02-30' }),
      'sla_date must be a date (YYYY-MM-DD)',
    );
  });

  test('when a case is created, then case.created carries the detail shape and no previous attributes', async () => {
    const created = await createCase({ title: 'Evento', client_id: client.id, responsible_id: lawyer.id });
    const [event] = await tap.waitFor('case.created', created.id);
    expect(event).toMatchObject({ type: 'case.created', api_version: 'v1', team_id: t.team.id, actor_id: t.user.id });
    expect(event.data.previous_attributes).toBeNull();
    expect(event.data.object).toMatchObject({
      id: created.id,
      client: {
        id: client.id,
        name: 'Padaria São José',
        type: 'PJ',
        email: 'contato@padaria.com',
        phone: '11 5555-0000',
      },
      responsible: { id: lawyer.id, name: 'Beatriz Souza', email: 'bia@silva.adv.br' },
    });
  });
});

describe('GET /v1/cases/{id}', () => {
  test('when the case exists, then the detail nests client (with email, phone) and responsible (with email)', async () => {
    const created = await createCase({
      title: 'Detalhe',
      client_id: client.id,
      responsible_id: lawyer.id,
      labels: ['a'],
    });
    const res = await call('GET', `/v1/cases/${created.id}`);
    expect(res.status).toBe(200);
    const { client_id, responsible_id, ...rest } = created;
    expect(res.body.data).toEqual({
      ...rest,
      number_info: null,
      client: {
        id: client_id,
        name: 'Padaria São José',
        type: 'PJ',
        email: 'contato@padaria.com',
        phone: '11 5555-0000',
      },
      responsible: { id: responsible_id, name: 'Beatriz Souza', email: 'bia@silva.adv.br' },
    });
  });

  test('when the id is unknown, of another team or of another kind, then 404 Case not found', async () => {
    const foreign = await createCase({ title: 'Alheio' }, other.api_key);
    for (const id of ['case_01jd3k0000000000000000000', foreign.id, client.id]) {
      expectNotFound(await call('GET', `/v1/cases/${id}`), 'Case not found');
    }
  });
});

describe('PUT /v1/cases/{id}', () => {
  test('when fields change, then the response holds id, the fields sent, title and updated_at', async () => {
    const created = await createCase({ title: 'Original', priority: 'baixa' });
    const res = await call('PUT', `/v1/cases/${created.id}`, { priority: 'alta', area: 'Cível' });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      id: created.id,
      priority: 'alta',
      area: 'Cível',
      title: 'Original',
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(res.body.data.updated_at > created.updated_at).toBe(true);
    expect((await call('GET', `/v1/cases/${created.id}`)).body.data).toMatchObject({ priority: 'alta', area: 'Cível' });
  });

  test('when the phase and priority change, then case.updated has both prior values and case.phase_changed the prior phase', async () => {
    const created = await createCase({ title: 'Fases', priority: 'media' });
    await call('PUT', `/v1/cases/${created.id}`, { phase: 'em-andamento', priority: 'alta' });
    const [updated] = await tap.waitFor('case.updated', created.id);
    expect(updated.data.previous_attributes).toEqual({ phase: 'recebido', priority: 'media' });
    expect(updated.data.object).toMatchObject({ phase: 'em-andamento', priority: 'alta' });
    const [moved] = await tap.waitFor('case.phase_changed', created.id);
    expect(moved.data.previous_attributes).toEqual({ phase: 'recebido' });
  });

  testEachInvalid(
    'the body',
    async (body: object) => call('PUT', `/v1/cases/${(await createCase({ title: 'Inválido' })).id}`, body),
    [
      [{}, 'No fields to update'],
      [{ phase: 'nada' }, 'Invalid phase'],
      [{ priority: 'x' }, 'Invalid priority'],
      [{ status: 'fechado' }, 'Invalid status'],
      [{ created_at: 'x' }, 'Unknown field: created_at'],
      [{ title: 5 }, 'title must be a string'],
    ],
  );

  test('when a link is set, it is checked; null unlinks', async () => {
    const created = await createCase({ title: 'Links', client_id: client.id });
    expectNotFound(
      await call('PUT', `/v1/cases/${created.id}`, { client_id: 'cli_01jd3k0000000000000000000' }),
      'Client not found',
    );
    expectNotFound(await call('PUT', `/v1/cases/${created.id}`, { responsible_id: other.user.id }), 'User not found');
    const res = await call('PUT', `/v1/cases/${created.id}`, { client_id: null, responsible_id: lawyer.id });
    expect(res.body.data).toMatchObject({ client_id: null, responsible_id: lawyer.id });
    expect((await call('GET', `/v1/cases/${created.id}`)).body.data).toMatchObject({
      client: null,
      responsible: { id: lawyer.id, name: 'Beatriz Souza' },
    });
  });

  test('when the number is taken by another case of the team, then 422 Duplicate case number', async () => {
    await createCase({ title: 'Um', number: 'PUT-1' });
    const second = await createCase({ title: 'Dois', number: 'PUT-2' });
    expectDuplicate(await call('PUT', `/v1/cases/${second.id}`, { number: 'PUT-1' }), 'Duplicate case number');
  });

  test('when status moves to arquivado and back to ativo, then archived_at follows and case.archived then case.updated are emitted', async () => {
    const created = await createCase({ title: 'Vai e volta' });
    const archived = await call('PUT', `/v1/cases/${created.id}`, { status: 'arquivado' });
    expect(archived.body.data).toMatchObject({ id: created.id, status: 'arquivado', title: 'Vai e volta' });
    expect((await call('GET', `/v1/cases/${created.id}`)).body.data).toMatchObject({
      status: 'arquivado',
      archived_at: expect.stringMatching(ISO_MS),
    });
    const [event] = await tap.waitFor('case.archived', created.id);
    expect(event.data.previous_attributes).toEqual({ status: 'ativo', archived_at: null });

    await call('PUT', `/v1/cases/${created.id}`, { status: 'ativo' });
    expect((await call('GET', `/v1/cases/${created.id}`)).body.data).toMatchObject({
      status: 'ativo',
      archived_at: null,
    });
    const [restored] = await tap.waitFor('case.updated', created.id);
    expect(restored.data.previous_attributes).toMatchObject({ status: 'arquivado' });
  });

  test('when the case is unknown, then 404 Case not found', async () => {
    expectNotFound(await call('PUT', '/v1/cases/case_01jd3k0000000000000000000', { title: 'x' }), 'Case not found');
  });
});

describe('DELETE /v1/cases/{id}', () => {
  test('when an ativo case is deleted, then it is archived; a second DELETE answers the same archived_at', async () => {
    const created = await createCase({ title: 'Arquivar' });
    const first = await call('DELETE', `/v1/cases/${created.id}`);
    expect(first.status).toBe(200);
    expect(first.body.data).toEqual({
      id: created.id,
      status: 'arquivado',
      archived_at: expect.stringMatching(ISO_MS),
    });
    const again = await call('DELETE', `/v1/cases/${created.id}`);
    expect(again.body.data).toEqual(first.body.data);
    const events = await tap.waitFor('case.archived', created.id);
    expect(events).toHaveLength(1);
  });

  test('when the case is unknown, then 404 Case not found', async () => {
    expectNotFound(await call('DELETE', '/v1/cases/case_01jd3k0000000000000000000'), 'Case not found');
  });
});
