// The deals endpoints on the app in process (its own database on the run's FerretDB),
// with the clients service and the user directory faked: create, read, update and
// phase moves. The closes are in deals-closes.test.ts and deals-won-case.test.ts.
import { newId } from '@lpm/shared/ids';
import { expectInvalid, expectNotFound, expectRefused, expectRequiredText } from '@lpm/test-kit/error-answers';
import { testEachInvalid } from '@lpm/test-kit/error-tables';
import { dealDefaults } from '@lpm/test-kit/records';
import { identity } from '@lpm/test-kit/teams';
import {
  ISO_MS,
  activityCounts,
  call,
  client,
  clients,
  create,
  dealsSuite,
  eventsOf,
  lawyer,
  sut,
  who,
} from './deals-suite.ts';

dealsSuite();

describe('POST /v1/deals', () => {
  test('when only a title is sent, then 201 returns the deal ativo in the first phase, BRL, with the phase probability', async () => {
    const res = await call('POST', '/v1/deals', { title: 'Consultoria tributária' });
    expect(res.statusCode).toBe(201);
    expect(res.json().data).toEqual({
      id: expect.stringMatching(/^deal_[0-9a-z]{26}$/),
      title: 'Consultoria tributária',
      ...dealDefaults(),
      currency: 'BRL',
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
  });

  test('when every field is sent, then the response echoes them with the client and responsible as flat ids, and deal.created carries the detail shape', async () => {
    const body = {
      title: 'Contrato de assessoria',
      value: 15000.5,
      currency: 'usd',
      phase: 'proposta',
      probability: 55,
      expected_close_date: '2027-03-31',
      client_id: client.id,
      responsible_id: lawyer.id,
      source: 'indicacao',
      description: 'Assessoria mensal',
      labels: ['recorrente'],
      metadata: { origem: 'evento' },
    };
    const created = await create(body);
    expect(created).toMatchObject({ ...body, currency: 'USD', status: 'ativo' });
    const [event] = await eventsOf(created.id);
    expect(event).toMatchObject({
      type: 'deal.created',
      team_id: who.teamId,
      actor_id: who.userId,
      data: { previous_attributes: null },
    });
    expect(event.data.object).toMatchObject({
      id: created.id,
      value: 15000.5,
      client: { id: client.id, name: 'Padaria São José', type: 'PJ', email: 'contato@padaria.com' },
      responsible: { id: lawyer.id, name: 'Beatriz Souza', email: 'bia@silva.adv.br' },
    });
    expect(event.data.object).not.toHaveProperty('activities_count');
  });

  test('when a phase is sent without a probability, then the probability is the phase suggested one', async () => {
    expect(await create({ title: 'X', phase: 'negociacao' })).toMatchObject({ phase: 'negociacao', probability: 75 });
  });

  test("when the team's pipeline is its own, then its first phase and probabilities are used and the default phases are refused", async () => {
    const own = identity();
    own.settings.deal_phases = [
      { name: 'contato', probability: 5 },
      { name: 'contrato', probability: 95 },
    ];
    expect(await create({ title: 'X' }, own)).toMatchObject({ phase: 'contato', probability: 5 });
    expectInvalid(await call('POST', '/v1/deals', { title: 'X', phase: 'lead' }, own), 'Invalid phase');
  });

  test('when the title is missing or blank, then 400 names the field', async () => {
    await expectRequiredText((body) => call('POST', '/v1/deals', body), 'title', { value: 10 });
  });

  test('when the phase is not one of the pipeline, then 400 Invalid phase', async () => {
    const err = expectInvalid(await call('POST', '/v1/deals', { title: 'X', phase: 'recebido' }), 'Invalid phase');
    expect(err.details).toMatchObject({ field: 'phase' });
  });

  test('when the probability is outside 0 to 100 or not a number, then 400 Invalid probability', async () => {
    for (const probability of [101, -1, '50', null]) {
      expectInvalid(await call('POST', '/v1/deals', { title: 'X', probability }), 'Invalid probability');
    }
  });

  test('when the value has more than 2 decimals or is negative, then 400', async () => {
    expectInvalid(await call('POST', '/v1/deals', { title: 'X', value: 10.005 }), 'value must have at most 2 decimals');
    expectInvalid(
      await call('POST', '/v1/deals', { title: 'X', value: -1 }),
      'value must be a number from 0 to 1000000000',
    );
  });

  test("when client_id is unknown, malformed or another team's, then 404 Client not found", async () => {
    const foreign = { ...client, id: newId('cli'), team: newId('team') };
    clients.set(foreign.id, foreign);
    for (const id of [newId('cli'), 'nope', foreign.id]) {
      expectNotFound(await call('POST', '/v1/deals', { title: 'X', client_id: id }), 'Client not found');
    }
  });

  test('when responsible_id is not a user of the team, then 404 User not found', async () => {
    for (const id of [newId('user'), 'x']) {
      expectNotFound(await call('POST', '/v1/deals', { title: 'X', responsible_id: id }), 'User not found');
    }
  });

  test('when status, a read-only field or an unknown field is sent, then 400 Unknown field', async () => {
    for (const field of ['status', 'final_value', 'activities_count', 'color']) {
      const err = expectInvalid(
        await call('POST', '/v1/deals', { title: 'X', [field]: 'x' }),
        `Unknown field: ${field}`,
      );
      expect(err.details).toEqual({ field, type: 'unknown' });
    }
  });

  test('when cents are summed, then values stay exact (0.1 + 0.2 is 0.3)', async () => {
    const a = await create({ title: 'A', value: 0.1 });
    const b = await create({ title: 'B', value: 0.2 });
    const stored = await sut.db
      .collection('deals')
      .find({ _id: { $in: [a.id, b.id] } })
      .toArray();
    expect(stored.map((d) => d.value_cents).sort()).toEqual([10, 20]);
  });
});

describe('GET /v1/deals/{id}', () => {
  test('when the deal exists, then the detail shape nests client and responsible with e-mail, counts activities and explains insights', async () => {
    const created = await create({
      title: 'Detalhe',
      value: 1000,
      client_id: client.id,
      responsible_id: lawyer.id,
      source: 'site',
    });
    activityCounts.set(created.id, 3);
    const res = await call('GET', `/v1/deals/${created.id}`);
    expect(res.statusCode).toBe(200);
    const data = res.json().data;
    expect(data).toEqual({
      ...Object.fromEntries(Object.entries(created).filter(([k]) => !['client_id', 'responsible_id'].includes(k))),
      client: { id: client.id, name: 'Padaria São José', type: 'PJ', email: 'contato@padaria.com' },
      responsible: { id: lawyer.id, name: 'Beatriz Souza', email: 'bia@silva.adv.br' },
      activities_count: 3,
      ai_insights: {
        win_probability: 10,
        health: 'good',
        risk_factors: [],
        basis: expect.objectContaining({ phase_probability: 10, segment: null, prior_weight: 10, min_sample: 5 }),
      },
    });
  });

  test("when the id is unknown, malformed, of another kind or another team's, then 404 Deal not found", async () => {
    const foreign = await create({ title: 'Alheio' }, identity());
    for (const id of [newId('deal'), 'deal_x', newId('case'), foreign.id]) {
      expectNotFound(await call('GET', `/v1/deals/${id}`), 'Deal not found');
    }
  });
});

describe('PUT /v1/deals/{id}', () => {
  test('when value and probability change, then the answer has id, the fields sent and updated_at, and deal.updated has the previous values', async () => {
    const created = await create({ title: 'Atualizar', value: 100 });
    const res = await call('PUT', `/v1/deals/${created.id}`, { value: 250.75, probability: 40 });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({
      id: created.id,
      value: 250.75,
      probability: 40,
      updated_at: expect.stringMatching(ISO_MS),
    });
    const updated = (await eventsOf(created.id)).filter((e) => e.type === 'deal.updated');
    expect(updated).toHaveLength(1);
    expect(updated[0].data.previous_attributes).toEqual({ value: 100, probability: 10 });
    expect(updated[0].data.object).toMatchObject({ value: 250.75, probability: 40 });
  });

  test('when the phase is sent, then the answer has previous_phase and phase_changed_at, and deal.phase_changed is emitted', async () => {
    const created = await create({ title: 'Mover por PUT' });
    const res = await call('PUT', `/v1/deals/${created.id}`, { phase: 'qualificado' });
    expect(res.json().data).toEqual({
      id: created.id,
      phase: 'qualificado',
      previous_phase: 'lead',
      phase_changed_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    const events = await eventsOf(created.id);
    expect(events.map((e) => e.type)).toEqual(['deal.created', 'deal.updated', 'deal.phase_changed']);
    expect(events[1].data.previous_attributes).toEqual({ phase: 'lead', previous_phase: null, phase_changed_at: null });
    expect(events[2].data.previous_attributes).toEqual({ phase: 'lead', phase_changed_at: null });
  });

  test('when nothing differs from the stored deal, then no event is written', async () => {
    const created = await create({ title: 'Igual', value: 5 });
    const res = await call('PUT', `/v1/deals/${created.id}`, { value: 5 });
    expect(res.json().data).toEqual({ id: created.id, value: 5, updated_at: created.updated_at });
    expect((await eventsOf(created.id)).map((e) => e.type)).toEqual(['deal.created']);
  });

  testEachInvalid(
    'the body',
    async (body: object) => call('PUT', `/v1/deals/${(await create({ title: 'Inválido' })).id}`, body),
    [
      [{}, 'No fields to update'],
      [{ status: 'ganho' }, 'Unknown field: status'],
      [{ probability: 150 }, 'Invalid probability'],
      [{ phase: 'nenhuma' }, 'Invalid phase'],
    ],
  );

  test('when the deal is unknown, then 404 Deal not found', async () => {
    expectNotFound(await call('PUT', `/v1/deals/${newId('deal')}`, { title: 'Y' }), 'Deal not found');
  });

  test('when a link is set to null, then it is removed; to an unknown client, then 404', async () => {
    const created = await create({ title: 'Links', client_id: client.id });
    expect((await call('PUT', `/v1/deals/${created.id}`, { client_id: null })).json().data).toMatchObject({
      client_id: null,
    });
    expectNotFound(await call('PUT', `/v1/deals/${created.id}`, { client_id: newId('cli') }), 'Client not found');
  });

  test('when the phase of a won or archived deal is changed, then 422 Deal already closed or Deal is archived; other fields still change', async () => {
    const won = await create({ title: 'Ganho' });
    await call('PUT', `/v1/deals/${won.id}/won`, {});
    expectRefused(await call('PUT', `/v1/deals/${won.id}`, { phase: 'proposta' }), 'Deal already closed');
    expect((await call('PUT', `/v1/deals/${won.id}`, { description: 'Fechado em reunião' })).statusCode).toBe(200);
    const archived = await create({ title: 'Arquivado' });
    await call('DELETE', `/v1/deals/${archived.id}`);
    const err = expectRefused(await call('PUT', `/v1/deals/${archived.id}`, { phase: 'proposta' }), 'Deal is archived');
    expect(err.details).toEqual({ reason: 'deal_is_archived' });
  });
});

describe('PUT /v1/deals/{id}/phase', () => {
  test('when an open deal moves, then the answer is id, phase, previous_phase, phase_changed_at, updated_at and the probability stays', async () => {
    const created = await create({ title: 'Fase' });
    const res = await call('PUT', `/v1/deals/${created.id}/phase`, { phase: 'proposta', notes: 'Enviada a proposta' });
    expect(res.statusCode).toBe(200);
    const data = res.json().data;
    expect(data).toEqual({
      id: created.id,
      phase: 'proposta',
      previous_phase: 'lead',
      phase_changed_at: expect.stringMatching(ISO_MS),
      updated_at: data.phase_changed_at,
    });
    const detail = (await call('GET', `/v1/deals/${created.id}`)).json().data;
    expect(detail).toMatchObject({
      phase: 'proposta',
      previous_phase: 'lead',
      phase_changed_at: data.phase_changed_at,
      probability: 10,
      status: 'ativo',
    });
    const events = await eventsOf(created.id);
    expect(events.map((e) => e.type)).toEqual(['deal.created', 'deal.updated', 'deal.phase_changed']);
    expect(events[2].data.object).toMatchObject({ phase: 'proposta', previous_phase: 'lead' });
  });

  test('when the phase is unknown or missing, then 400; the deal unknown, then 404', async () => {
    const created = await create({ title: 'Fase inválida' });
    expectInvalid(await call('PUT', `/v1/deals/${created.id}/phase`, { phase: 'triagem' }), 'Invalid phase');
    expectInvalid(await call('PUT', `/v1/deals/${created.id}/phase`, {}), 'phase is required');
    expectNotFound(await call('PUT', `/v1/deals/${newId('deal')}/phase`, { phase: 'lead' }), 'Deal not found');
  });

  test('when the deal is lost or archived, then 422 Deal already closed or Deal is archived', async () => {
    const lost = await create({ title: 'Perdido' });
    await call('PUT', `/v1/deals/${lost.id}/lost`, {});
    expectRefused(await call('PUT', `/v1/deals/${lost.id}/phase`, { phase: 'proposta' }), 'Deal already closed');
    await call('DELETE', `/v1/deals/${lost.id}`);
    expectRefused(await call('PUT', `/v1/deals/${lost.id}/phase`, { phase: 'proposta' }), 'Deal is archived');
  });
});
