// Every Deals endpoint on the app in process (its own database on the run's
// FerretDB), with the clients service and the user directory faked.
import type { CommandStartedEvent } from 'mongodb';
import type { Identity } from '@lpm/shared/identity';
import type { DomainEvent } from '@lpm/shared/events';
import { newId } from '@lpm/shared/ids';
import { AppError } from '@lpm/shared/errors';
import { DOCUMENT_LOCK_MS, LOCKS_COLLECTION, lockKey } from '@lpm/shared/store/lock';
import { expectError } from '@lpm/test-kit/api';
import type { ClientFacts } from '@lpm/shared/upstream/clients-service';
import { dealDefaults } from '@lpm/test-kit/records';
import { identity } from '@lpm/test-kit/teams';
import { startDeals, type DealsUnderTest } from './helper.ts';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let sut: DealsUnderTest;
let who: Identity;
const clients = new Map<string, ClientFacts & { team: string }>();
const users = new Map<string, { id: string; name: string; email: string; team: string }>();
let client: ClientFacts;
let lawyer: { id: string; name: string; email: string };

const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, as = who) => sut.call(as, { method, url, payload: payload as object });
const create = async (body: Record<string, unknown>, as = who) => {
  const res = await call('POST', '/v1/deals', body, as);
  expect(res.statusCode).toBe(201);
  return res.json().data;
};
/** The events a deal's document holds in its outbox (no relay runs here). */
const eventsOf = async (id: string): Promise<DomainEvent[]> => ((await sut.db.collection('deals').findOne({ _id: id as never }))?.outbox ?? []) as DomainEvent[];

const activityCounts = new Map<string, number>();

beforeAll(async () => {
  sut = await startDeals({
    clients: { facts: async (caller, id) => (clients.get(id)?.team === caller.teamId ? clients.get(id)! : null) },
    users: { find: async (teamId, ids) => new Map(ids.filter((id) => users.get(id)?.team === teamId).map((id) => [id, users.get(id)!])) },
    // The activities service's count for a deal (asked when the detail is read).
    activities: { countsFor: async (_caller, dealId) => ({ count: activityCounts.get(dealId) ?? 0, open: 1, overdue: 0 }) },
  });
  who = identity();
  client = { id: newId('cli'), name: 'Padaria São José', type: 'PJ', email: 'contato@padaria.com', phone: null, status: 'active', updated_at: new Date().toISOString() };
  clients.set(client.id, { ...client, team: who.teamId });
  lawyer = { id: newId('user'), name: 'Beatriz Souza', email: 'bia@silva.adv.br' };
  users.set(lawyer.id, { ...lawyer, team: who.teamId });
});

afterAll(async () => {
  await sut?.close();
});

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
    expect(event).toMatchObject({ type: 'deal.created', team_id: who.teamId, actor_id: who.userId, data: { previous_attributes: null } });
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
    expectError(await call('POST', '/v1/deals', { title: 'X', phase: 'lead' }, own), 400, 'VALIDATION_ERROR', 'Invalid phase');
  });

  test('when the title is missing or blank, then 400 names the field', async () => {
    const err = expectError(await call('POST', '/v1/deals', { value: 10 }), 400, 'VALIDATION_ERROR', 'title is required');
    expect(err.details).toEqual({ field: 'title', type: 'required' });
    expectError(await call('POST', '/v1/deals', { title: '  ' }), 400, 'VALIDATION_ERROR', 'title must not be empty');
  });

  test('when the phase is not one of the pipeline, then 400 Invalid phase', async () => {
    const err = expectError(await call('POST', '/v1/deals', { title: 'X', phase: 'recebido' }), 400, 'VALIDATION_ERROR', 'Invalid phase');
    expect(err.details).toMatchObject({ field: 'phase' });
  });

  test('when the probability is outside 0 to 100 or not a number, then 400 Invalid probability', async () => {
    for (const probability of [101, -1, '50', null]) {
      expectError(await call('POST', '/v1/deals', { title: 'X', probability }), 400, 'VALIDATION_ERROR', 'Invalid probability');
    }
  });

  test('when the value has more than 2 decimals or is negative, then 400', async () => {
    expectError(await call('POST', '/v1/deals', { title: 'X', value: 10.005 }), 400, 'VALIDATION_ERROR', 'value must have at most 2 decimals');
    expectError(await call('POST', '/v1/deals', { title: 'X', value: -1 }), 400, 'VALIDATION_ERROR', 'value must be a number from 0 to 1000000000');
  });

  test("when client_id is unknown, malformed or another team's, then 404 Client not found", async () => {
    const foreign = { ...client, id: newId('cli'), team: newId('team') };
    clients.set(foreign.id, foreign);
    for (const id of [newId('cli'), 'nope', foreign.id]) {
      expectError(await call('POST', '/v1/deals', { title: 'X', client_id: id }), 404, 'NOT_FOUND', 'Client not found');
    }
  });

  test('when responsible_id is not a user of the team, then 404 User not found', async () => {
    for (const id of [newId('user'), 'x']) {
      expectError(await call('POST', '/v1/deals', { title: 'X', responsible_id: id }), 404, 'NOT_FOUND', 'User not found');
    }
  });

  test('when status, a read-only field or an unknown field is sent, then 400 Unknown field', async () => {
    for (const field of ['status', 'final_value', 'activities_count', 'color']) {
      const err = expectError(await call('POST', '/v1/deals', { title: 'X', [field]: 'x' }), 400, 'VALIDATION_ERROR', `Unknown field: ${field}`);
      expect(err.details).toEqual({ field, type: 'unknown' });
    }
  });

  test('when cents are summed, then values stay exact (0.1 + 0.2 is 0.3)', async () => {
    const a = await create({ title: 'A', value: 0.1 });
    const b = await create({ title: 'B', value: 0.2 });
    const stored = await sut.db.collection('deals').find({ _id: { $in: [a.id, b.id] } }).toArray();
    expect(stored.map((d) => d.value_cents).sort()).toEqual([10, 20]);
  });
});

describe('GET /v1/deals/{id}', () => {
  test('when the deal exists, then the detail shape nests client and responsible with e-mail, counts activities and explains insights', async () => {
    const created = await create({ title: 'Detalhe', value: 1000, client_id: client.id, responsible_id: lawyer.id, source: 'site' });
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
      expectError(await call('GET', `/v1/deals/${id}`), 404, 'NOT_FOUND', 'Deal not found');
    }
  });
});

describe('PUT /v1/deals/{id}', () => {
  test('when value and probability change, then the answer has id, the fields sent and updated_at, and deal.updated has the previous values', async () => {
    const created = await create({ title: 'Atualizar', value: 100 });
    const res = await call('PUT', `/v1/deals/${created.id}`, { value: 250.75, probability: 40 });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ id: created.id, value: 250.75, probability: 40, updated_at: expect.stringMatching(ISO_MS) });
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

  test('when the body is empty, then 400 No fields to update', async () => {
    const created = await create({ title: 'Vazio' });
    expectError(await call('PUT', `/v1/deals/${created.id}`, {}), 400, 'VALIDATION_ERROR', 'No fields to update');
  });

  test('when status is sent, then 400 Unknown field: status', async () => {
    const created = await create({ title: 'Status' });
    expectError(await call('PUT', `/v1/deals/${created.id}`, { status: 'ganho' }), 400, 'VALIDATION_ERROR', 'Unknown field: status');
  });

  test('when the probability or phase is invalid, or the deal unknown, then 400 or 404 with the spec message', async () => {
    const created = await create({ title: 'Inválido' });
    expectError(await call('PUT', `/v1/deals/${created.id}`, { probability: 150 }), 400, 'VALIDATION_ERROR', 'Invalid probability');
    expectError(await call('PUT', `/v1/deals/${created.id}`, { phase: 'nenhuma' }), 400, 'VALIDATION_ERROR', 'Invalid phase');
    expectError(await call('PUT', `/v1/deals/${newId('deal')}`, { title: 'Y' }), 404, 'NOT_FOUND', 'Deal not found');
  });

  test('when a link is set to null, then it is removed; to an unknown client, then 404', async () => {
    const created = await create({ title: 'Links', client_id: client.id });
    expect((await call('PUT', `/v1/deals/${created.id}`, { client_id: null })).json().data).toMatchObject({ client_id: null });
    expectError(await call('PUT', `/v1/deals/${created.id}`, { client_id: newId('cli') }), 404, 'NOT_FOUND', 'Client not found');
  });

  test('when the phase of a won or archived deal is changed, then 422 Deal already closed or Deal is archived; other fields still change', async () => {
    const won = await create({ title: 'Ganho' });
    await call('PUT', `/v1/deals/${won.id}/won`, {});
    expectError(await call('PUT', `/v1/deals/${won.id}`, { phase: 'proposta' }), 422, 'VALIDATION_ERROR', 'Deal already closed');
    expect((await call('PUT', `/v1/deals/${won.id}`, { description: 'Fechado em reunião' })).statusCode).toBe(200);
    const archived = await create({ title: 'Arquivado' });
    await call('DELETE', `/v1/deals/${archived.id}`);
    const err = expectError(await call('PUT', `/v1/deals/${archived.id}`, { phase: 'proposta' }), 422, 'VALIDATION_ERROR', 'Deal is archived');
    expect(err.details).toEqual({ reason: 'deal_is_archived' });
  });
});

describe('PUT /v1/deals/{id}/phase', () => {
  test('when an open deal moves, then the answer is id, phase, previous_phase, phase_changed_at, updated_at and the probability stays', async () => {
    const created = await create({ title: 'Fase' });
    const res = await call('PUT', `/v1/deals/${created.id}/phase`, { phase: 'proposta', notes: 'Enviada a proposta' });
    expect(res.statusCode).toBe(200);
    const data = res.json().data;
    expect(data).toEqual({ id: created.id, phase: 'proposta', previous_phase: 'lead', phase_changed_at: expect.stringMatching(ISO_MS), updated_at: data.phase_changed_at });
    const detail = (await call('GET', `/v1/deals/${created.id}`)).json().data;
    expect(detail).toMatchObject({ phase: 'proposta', previous_phase: 'lead', phase_changed_at: data.phase_changed_at, probability: 10, status: 'ativo' });
    const events = await eventsOf(created.id);
    expect(events.map((e) => e.type)).toEqual(['deal.created', 'deal.updated', 'deal.phase_changed']);
    expect(events[2].data.object).toMatchObject({ phase: 'proposta', previous_phase: 'lead' });
  });

  test('when the phase is unknown or missing, then 400; the deal unknown, then 404', async () => {
    const created = await create({ title: 'Fase inválida' });
    expectError(await call('PUT', `/v1/deals/${created.id}/phase`, { phase: 'triagem' }), 400, 'VALIDATION_ERROR', 'Invalid phase');
    expectError(await call('PUT', `/v1/deals/${created.id}/phase`, {}), 400, 'VALIDATION_ERROR', 'phase is required');
    expectError(await call('PUT', `/v1/deals/${newId('deal')}/phase`, { phase: 'lead' }), 404, 'NOT_FOUND', 'Deal not found');
  });

  test('when the deal is lost or archived, then 422 Deal already closed or Deal is archived', async () => {
    const lost = await create({ title: 'Perdido' });
    await call('PUT', `/v1/deals/${lost.id}/lost`, {});
    expectError(await call('PUT', `/v1/deals/${lost.id}/phase`, { phase: 'proposta' }), 422, 'VALIDATION_ERROR', 'Deal already closed');
    await call('DELETE', `/v1/deals/${lost.id}`);
    expectError(await call('PUT', `/v1/deals/${lost.id}/phase`, { phase: 'proposta' }), 422, 'VALIDATION_ERROR', 'Deal is archived');
  });
});

describe('PUT /v1/deals/{id}/won and /lost', () => {
  test('when won without final_value, then final_value is the value; deal.won carries the deal with the previous status', async () => {
    const created = await create({ title: 'Ganhar', value: 1234.56 });
    const res = await call('PUT', `/v1/deals/${created.id}/won`, { notes: 'Assinado' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ id: created.id, status: 'ganho', final_value: 1234.56, won_at: expect.stringMatching(ISO_MS) });
    const won = (await eventsOf(created.id)).find((e) => e.type === 'deal.won')!;
    expect(won.data.object).toMatchObject({ id: created.id, status: 'ganho', final_value: 1234.56, won_at: res.json().data.won_at });
    expect(won.data.previous_attributes).toEqual({ status: 'ativo', final_value: null, won_at: null });
  });

  test('when won with a final_value, then it is stored to the cent', async () => {
    const created = await create({ title: 'Ganhar com valor', value: 1000 });
    const res = await call('PUT', `/v1/deals/${created.id}/won`, { final_value: 999.99 });
    expect(res.json().data.final_value).toBe(999.99);
    expect((await call('GET', `/v1/deals/${created.id}`)).json().data).toMatchObject({ status: 'ganho', final_value: 999.99, value: 1000 });
  });

  test('when won or lost again, then 422 Deal already closed with its reason', async () => {
    const created = await create({ title: 'Duas vezes' });
    await call('PUT', `/v1/deals/${created.id}/won`, {});
    const err = expectError(await call('PUT', `/v1/deals/${created.id}/won`, {}), 422, 'VALIDATION_ERROR', 'Deal already closed');
    expect(err.details).toEqual({ reason: 'deal_already_closed' });
    expectError(await call('PUT', `/v1/deals/${created.id}/lost`, {}), 422, 'VALIDATION_ERROR', 'Deal already closed');
  });

  test('when the deal is archived, then won and lost are 422 Deal is archived', async () => {
    const created = await create({ title: 'Arquivado antes' });
    await call('DELETE', `/v1/deals/${created.id}`);
    expectError(await call('PUT', `/v1/deals/${created.id}/won`, {}), 422, 'VALIDATION_ERROR', 'Deal is archived');
    expectError(await call('PUT', `/v1/deals/${created.id}/lost`, {}), 422, 'VALIDATION_ERROR', 'Deal is archived');
  });

  test('when the deal is unknown, then 404; a final_value with 3 decimals, then 400', async () => {
    expectError(await call('PUT', `/v1/deals/${newId('deal')}/won`, {}), 404, 'NOT_FOUND', 'Deal not found');
    expectError(await call('PUT', `/v1/deals/${newId('deal')}/lost`, {}), 404, 'NOT_FOUND', 'Deal not found');
    const created = await create({ title: 'Decimais' });
    expectError(await call('PUT', `/v1/deals/${created.id}/won`, { final_value: 1.001 }), 400, 'VALIDATION_ERROR', 'final_value must have at most 2 decimals');
  });

  test('when lost, then the answer has the reason, competitor and lost_at, and deal.lost is emitted', async () => {
    const created = await create({ title: 'Perder' });
    const res = await call('PUT', `/v1/deals/${created.id}/lost`, { loss_reason: 'Preço', competitor: 'Escritório X', notes: 'Preferiu outro' });
    expect(res.json().data).toEqual({ id: created.id, status: 'perdido', loss_reason: 'Preço', competitor: 'Escritório X', lost_at: expect.stringMatching(ISO_MS) });
    const lost = (await eventsOf(created.id)).find((e) => e.type === 'deal.lost')!;
    expect(lost.data.object).toMatchObject({ status: 'perdido', loss_reason: 'Preço', competitor: 'Escritório X' });
    expect(lost.data.previous_attributes).toEqual({ status: 'ativo', loss_reason: null, competitor: null, lost_at: null });
  });

  test('when 20 won and lost requests on one deal arrive at once, then exactly one succeeds and 19 get 422 Deal already closed', async () => {
    const created = await create({ title: 'Corrida', value: 10 });
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call('PUT', `/v1/deals/${created.id}/${i % 2 ? 'lost' : 'won'}`, {})),
    );
    const statuses = answers.map((a) => a.statusCode);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 422)).toHaveLength(19);
    for (const a of answers.filter((x) => x.statusCode === 422)) expect(a.json().error.message).toBe('Deal already closed');
    const closing = (await eventsOf(created.id)).filter((e) => e.type === 'deal.won' || e.type === 'deal.lost');
    expect(closing).toHaveLength(1);
  });
});

describe('won with create_case, while another request closes the deal', () => {
  test('when the deal is lost while its won makes the case, then the won is 422 and that case is archived; when another request wins it meanwhile, the case stays', async () => {
    const made = new Map<string, { id: string; archived: boolean }>();
    const meanwhile = new Map<string, string>();
    const own: DealsUnderTest = await startDeals({
      cases: {
        // The cases service makes the deal's case while another request closes the deal.
        createForDeal: async (caller, dealId, request) => {
          const close = meanwhile.get(dealId);
          meanwhile.delete(dealId);
          // (A won sent meanwhile asks for the deal's case too, and gets the same one.)
          if (close) expect((await own.call(caller, { method: 'PUT', url: `/v1/deals/${dealId}/${close}`, payload: {} })).statusCode).toBe(200);
          const kase = made.get(dealId) ?? { id: newId('case'), archived: false };
          made.set(dealId, kase);
          return { id: kase.id, title: request.title };
        },
        archiveForDeal: async (_caller, dealId) => {
          const kase = made.get(dealId);
          if (kase) kase.archived = true;
          return kase?.id ?? null;
        },
      },
    });
    try {
      const open = async (title: string, close: 'lost' | 'won') => {
        const deal = (await own.call(who, { method: 'POST', url: '/v1/deals', payload: { title } })).json().data;
        meanwhile.set(deal.id, close);
        return deal.id as string;
      };
      const lost = await open('Perdido enquanto o caso nascia', 'lost');
      expectError(await own.call(who, { method: 'PUT', url: `/v1/deals/${lost}/won`, payload: { create_case: true } }), 422, 'VALIDATION_ERROR', 'Deal already closed');
      expect(made.get(lost)).toEqual({ id: expect.stringMatching(/^case_/), archived: true });

      const won = await open('Ganho por outro pedido', 'won');
      expectError(await own.call(who, { method: 'PUT', url: `/v1/deals/${won}/won`, payload: { create_case: true } }), 422, 'VALIDATION_ERROR', 'Deal already closed');
      expect(made.get(won)).toEqual({ id: expect.stringMatching(/^case_/), archived: false });
    } finally {
      await own.close();
    }
  });
});

describe('a deal closed unwon whose case was not archived', () => {
  /** A cases service that keeps each deal's case (made once), whose archive fails while `down`. */
  const casesService = () => {
    const made = new Map<string, { id: string; archived: boolean }>();
    const state = { down: false, archiveCalls: 0 };
    return {
      made,
      state,
      make: (dealId: string) => {
        const kase = made.get(dealId) ?? { id: newId('case'), archived: false };
        made.set(dealId, kase);
        return kase;
      },
      archiveForDeal: async (_caller: unknown, dealId: string) => {
        state.archiveCalls++;
        if (state.down) throw new AppError(503, 'SERVICE_UNAVAILABLE', 'cases unavailable');
        const kase = made.get(dealId);
        if (kase) kase.archived = true;
        return kase?.id ?? null;
      },
    };
  };
  const owes = async (own: DealsUnderTest, id: string) => (await own.db.collection('deals').findOne({ _id: id as never }))?.case_archive_pending;

  test('when the won that makes the case dies after the lost found no case to archive, then the case archive repair archives it, once', async () => {
    const cases = casesService();
    const own: DealsUnderTest = await startDeals({
      cases: {
        createForDeal: async (caller, dealId) => {
          // The deal is lost while the case is being made: the lost finds no case yet.
          expect((await own.call(caller, { method: 'PUT', url: `/v1/deals/${dealId}/lost`, payload: {} })).statusCode).toBe(200);
          cases.make(dealId);
          // Then the won's process dies: its last step (finding the deal lost, archiving the case) never runs.
          throw new Error('the deals process died');
        },
        archiveForDeal: cases.archiveForDeal,
      },
    });
    try {
      const deal = (await own.call(who, { method: 'POST', url: '/v1/deals', payload: { title: 'Perdido, caso órfão' } })).json().data;
      expect((await own.call(who, { method: 'PUT', url: `/v1/deals/${deal.id}/won`, payload: { create_case: true } })).statusCode).toBe(500);
      expect(cases.made.get(deal.id)).toEqual({ id: expect.stringMatching(/^case_/), archived: false });

      await Promise.all([own.deals.settleCaseArchives(), own.deals.settleCaseArchives()]);
      expect(cases.made.get(deal.id)?.archived).toBe(true);
      expect(await owes(own, deal.id)).toBe(0);
      const calls = cases.state.archiveCalls;
      await own.deals.settleCaseArchives();
      expect(cases.state.archiveCalls).toBe(calls);
    } finally {
      await own.close();
    }
  });

  test('when the cases service fails the archive after a lost, then the lost still answers 200 and the repair archives the case once the cases service is back', async () => {
    const cases = casesService();
    const own: DealsUnderTest = await startDeals({
      cases: {
        createForDeal: async (caller, dealId, request) => {
          const close = (await own.call(caller, { method: 'PUT', url: `/v1/deals/${dealId}/lost`, payload: {} })).statusCode;
          expect(close).toBe(200);
          return { id: cases.make(dealId).id, title: request.title };
        },
        archiveForDeal: cases.archiveForDeal,
      },
    });
    try {
      const deal = (await own.call(who, { method: 'POST', url: '/v1/deals', payload: { title: 'Perdido com casos fora' } })).json().data;
      // The won makes the case after the lost; both archives it asks for fail.
      cases.state.down = true;
      expectError(await own.call(who, { method: 'PUT', url: `/v1/deals/${deal.id}/won`, payload: { create_case: true } }), 422, 'VALIDATION_ERROR', 'Deal already closed');
      expect(cases.made.get(deal.id)?.archived).toBe(false);
      expect(await owes(own, deal.id)).toBe(1);
      await own.deals.settleCaseArchives();
      expect(cases.made.get(deal.id)?.archived).toBe(false);

      cases.state.down = false;
      await own.deals.settleCaseArchives();
      expect(cases.made.get(deal.id)?.archived).toBe(true);
      expect(await owes(own, deal.id)).toBe(0);
    } finally {
      await own.close();
    }
  });
});

describe('won after a won with create_case that did not complete', () => {
  test('when the first attempt ends in 503 after the case exists, then the retry gets that case, and the cases service made one', async () => {
    const made = new Map<string, string>();
    const asked: string[] = [];
    const locks = () => own.db.collection<{ _id: string; owner: string; expires_at: Date }>(LOCKS_COLLECTION);
    const own: DealsUnderTest = await startDeals({
      cases: {
        createForDeal: async (_caller, dealId, request) => {
          asked.push(dealId);
          const id = made.get(dealId) ?? newId('case');
          if (!made.has(dealId)) {
            made.set(dealId, id);
            // Another writer holds the deal past the won's lock wait: the first attempt ends in 503 after the case exists.
            const slot = Math.floor(Date.now() / DOCUMENT_LOCK_MS);
            await locks().insertMany(Array.from({ length: 4 }, (_, i) => ({ _id: `${lockKey('deals', dealId)}:${slot + i}`, owner: 'test', expires_at: new Date((slot + i + 1) * DOCUMENT_LOCK_MS) })));
          }
          return { id, title: request.title };
        },
        archiveForDeal: async () => null,
      },
    });
    try {
      const deal = (await own.call(who, { method: 'POST', url: '/v1/deals', payload: { title: 'Ganho em duas vezes' } })).json().data;
      expectError(await own.call(who, { method: 'PUT', url: `/v1/deals/${deal.id}/won`, payload: { create_case: true } }), 503, 'SERVICE_UNAVAILABLE', 'The record is busy; retry');
      await locks().deleteMany({ owner: 'test' });
      const retry = await own.call(who, { method: 'PUT', url: `/v1/deals/${deal.id}/won`, payload: { create_case: true } });
      expect(retry.statusCode).toBe(200);
      expect(retry.json().data.case_created).toEqual({ id: made.get(deal.id), title: 'Ganho em duas vezes' });
      expect(asked).toEqual([deal.id, deal.id]);
    } finally {
      await own.close();
    }
  }, 20_000);
});

describe('won without create_case after a won with create_case that did not complete', () => {
  test('when the first attempt ends in 503 after the case exists and the retry asks for no case, then the deal is won without one and the case made for it is archived', async () => {
    const made = new Map<string, string>();
    const archived: string[] = [];
    const locks = () => own.db.collection<{ _id: string; owner: string; expires_at: Date }>(LOCKS_COLLECTION);
    const own: DealsUnderTest = await startDeals({
      cases: {
        createForDeal: async (_caller, dealId, request) => {
          const id = newId('case');
          made.set(dealId, id);
          // Another writer holds the deal past the won's lock wait: the first attempt ends in 503 after the case exists.
          const slot = Math.floor(Date.now() / DOCUMENT_LOCK_MS);
          await locks().insertMany(Array.from({ length: 4 }, (_, i) => ({ _id: `${lockKey('deals', dealId)}:${slot + i}`, owner: 'test', expires_at: new Date((slot + i + 1) * DOCUMENT_LOCK_MS) })));
          return { id, title: request.title };
        },
        archiveForDeal: async (_caller, dealId) => {
          const id = made.get(dealId) ?? null;
          if (id) archived.push(id);
          return id;
        },
      },
    });
    try {
      const deal = (await own.call(who, { method: 'POST', url: '/v1/deals', payload: { title: 'Ganho sem processo' } })).json().data;
      expectError(await own.call(who, { method: 'PUT', url: `/v1/deals/${deal.id}/won`, payload: { create_case: true } }), 503, 'SERVICE_UNAVAILABLE', 'The record is busy; retry');
      await locks().deleteMany({ owner: 'test' });
      const retry = await own.call(who, { method: 'PUT', url: `/v1/deals/${deal.id}/won`, payload: {} });
      expect(retry.statusCode).toBe(200);
      expect(retry.json().data.case_created).toBeUndefined();
      expect(archived).toEqual([made.get(deal.id)]);
      const stored = await own.db.collection('deals').findOne({ _id: deal.id });
      expect(stored?.case_archive_pending ?? 0).toBe(0);
    } finally {
      await own.close();
    }
  }, 20_000);
});

describe('won with create_case: the path', () => {
  test('when a deal is won with create_case, then the deal is read once and written once, under one lock, and the cases service is asked once', async () => {
    const asked: string[] = [];
    const own: DealsUnderTest = await startDeals({
      cases: {
        createForDeal: async (_caller, dealId, request) => {
          asked.push(dealId);
          return { id: newId('case'), title: request.title };
        },
        archiveForDeal: async () => null,
      },
    });
    const deal = (await own.call(who, { method: 'POST', url: '/v1/deals', payload: { title: 'Um caminho curto' } })).json().data;
    // The deal's own commands: its record, and its lock (the list counts take locks of their own).
    const commands: string[] = [];
    const count = (e: CommandStartedEvent) => {
      const target = e.command[e.commandName];
      if (target === 'deals' || (target === LOCKS_COLLECTION && JSON.stringify(e.command).includes(lockKey('deals', deal.id)))) commands.push(`${e.commandName} ${target}`);
    };
    try {
      own.db.client.on('commandStarted', count);
      const res = await own.call(who, { method: 'PUT', url: `/v1/deals/${deal.id}/won`, payload: { create_case: true } });
      own.db.client.off('commandStarted', count);
      expect(res.statusCode).toBe(200);
      expect(asked).toEqual([deal.id]);
      expect(commands.sort()).toEqual(['delete document_locks', 'find deals', 'insert document_locks', 'update deals']);
    } finally {
      own.db.client.off('commandStarted', count);
      await own.close();
    }
  });

  test("when the cases service answers with the client its check found, then the deal's event shows that client and the local client view is not read", async () => {
    const checked: ClientFacts = { ...client, name: 'Padaria São José Ltda', updated_at: new Date(Date.now() + 1000).toISOString() };
    const own: DealsUnderTest = await startDeals({
      clients: { facts: async (caller, id) => (id === client.id && caller.teamId === who.teamId ? client : null) },
      users: { find: async (teamId, ids) => new Map(ids.filter((id) => users.get(id)?.team === teamId).map((id) => [id, users.get(id)!])) },
      cases: {
        createForDeal: async (_caller, _dealId, request) => ({ id: newId('case'), title: request.title, client: checked }),
        archiveForDeal: async () => null,
      },
    });
    const deal = (await own.call(who, { method: 'POST', url: '/v1/deals', payload: { title: 'Com cliente', client_id: client.id, responsible_id: lawyer.id } })).json().data;
    const collections: string[] = [];
    const count = (e: CommandStartedEvent) => collections.push(`${e.commandName} ${e.command[e.commandName]}`);
    try {
      own.db.client.on('commandStarted', count);
      const res = await own.call(who, { method: 'PUT', url: `/v1/deals/${deal.id}/won`, payload: { create_case: true } });
      own.db.client.off('commandStarted', count);
      expect(res.statusCode).toBe(200);
      expect(res.json().data.case_created).toEqual({ id: expect.stringMatching(/^case_/), title: 'Com cliente' });
      expect(collections).not.toContain('find client_views');
      const stored = await own.db.collection('deals').findOne({ _id: deal.id });
      const won = (stored?.outbox as DomainEvent[]).find((e) => e.type === 'deal.won')!;
      expect(won.data.object.client).toMatchObject({ id: client.id, name: 'Padaria São José Ltda', type: 'PJ' });
      expect(stored?.case_created).toEqual(res.json().data.case_created);
    } finally {
      own.db.client.off('commandStarted', count);
      await own.close();
    }
  });
});

describe('DELETE /v1/deals/{id}', () => {
  test('when a deal is archived, then status arquivado and archived_at; again, then the same archived_at', async () => {
    const created = await create({ title: 'Arquivar' });
    await call('PUT', `/v1/deals/${created.id}/won`, {});
    const first = await call('DELETE', `/v1/deals/${created.id}`);
    expect(first.json().data).toEqual({ id: created.id, status: 'arquivado', archived_at: expect.stringMatching(ISO_MS) });
    const again = await call('DELETE', `/v1/deals/${created.id}`);
    expect(again.json().data).toEqual(first.json().data);
    const events = (await eventsOf(created.id)).filter((e) => e.type === 'deal.updated');
    expect(events).toHaveLength(1);
    expect(events[0].data.previous_attributes).toEqual({ status: 'ganho', archived_at: null });
  });

  test('when the deal is unknown, then 404 Deal not found', async () => {
    expectError(await call('DELETE', `/v1/deals/${newId('deal')}`), 404, 'NOT_FOUND', 'Deal not found');
  });
});

describe('POST /internal/phases-in-use', () => {
  test("when the gateway asks about deal phases, then the team's phases in use are named", async () => {
    const team = identity();
    await create({ title: 'Em proposta', phase: 'proposta' }, team);
    const res = await call('POST', '/internal/phases-in-use', { kind: 'deal', phases: ['lead', 'proposta', 'fechamento'] }, team);
    expect(res.json().data).toEqual({ in_use: ['proposta'] });
  });
});

describe('GET /internal/deals/{id}', () => {
  test("when another service checks a deal, then the team's deal answers with its facts; another team's or an unknown one is 404", async () => {
    const deal = await create({ title: 'Conferido' });
    const res = await call('GET', `/internal/deals/${deal.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ id: deal.id, title: 'Conferido', status: 'ativo', updated_at: deal.updated_at });
    expectError(await call('GET', `/internal/deals/${deal.id}`, undefined, identity()), 404, 'NOT_FOUND', 'Deal not found');
    expectError(await call('GET', `/internal/deals/${newId('deal')}`), 404, 'NOT_FOUND', 'Deal not found');
  });
});
