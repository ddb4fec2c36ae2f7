// Deals through the gateway of a running system (gateway, clients, cases, deals,
// webhooks as processes on the run's FerretDB and RabbitMQ), with real keys: the
// case a won deal creates, retries that never make a second one, the pipeline's
// phases in use, and deal events at a subscribed HTTPS receiver.
import { createHmac, randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { defaultTeamSettings } from '@lpm/shared/identity';
import { servicePort } from '@lpm/shared/service/port-layout';
import { userCreateArgs } from '@lpm/test-kit/cli';
import { systemForSuite, type IssuedTeam, type RunningSystem } from '@lpm/test-kit/running-system';
import { startHttpsReceiver, type HttpsReceiver } from '@lpm/test-kit/https-receiver';
import { waitFor } from '@lpm/test-kit/wait';
import { expectInvalid, expectRefused } from '@lpm/test-kit/error-answers';
import { DealCasesService } from '../src/upstream/cases-service.ts';

const INTERNAL_TOKEN = randomBytes(32).toString('hex');

let sys: RunningSystem;
let receiver: HttpsReceiver;
let t: IssuedTeam;
let lawyer: { id: string; name: string; email: string };
let client: { id: string; name: string };

const call = (method: string, path: string, body?: unknown, key = t.api_key) => sys.call(key, method, path, body);
const createDeal = async (body: Record<string, unknown>, key = t.api_key) => {
  const res = await call('POST', '/v1/deals', body, key);
  expect(res.status).toBe(201);
  return res.body.data;
};
const casesOfClient = async (clientId: string) => {
  const { body } = await call('GET', `/v1/cases?client_id=${clientId}`);
  return { total: body.pagination!.total, ids: body.data.map((c: { id: string }) => c.id) };
};

systemForSuite('dealsapi', { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', INTERNAL_TOKEN }, async (started) => {
  sys = started;
  receiver = await startHttpsReceiver();
  t = sys.team('Vendas Advogados');
  lawyer = sys.admin(...userCreateArgs(t.team.id, 'Marina Rocha', 'marina@vendas.adv.br')).user;
  client = (await call('POST', '/v1/clients', { type: 'PJ', name: 'Transportes Lima', email: 'contato@lima.com' })).body
    .data;
});

afterAll(async () => {
  await receiver?.close();
});

describe('won with create_case', () => {
  test("when a deal is won with create_case, then the case exists in /v1/cases with the deal's client, responsible, title and area", async () => {
    const deal = await createDeal({
      title: 'Contencioso trabalhista',
      value: 48000,
      client_id: client.id,
      responsible_id: lawyer.id,
    });
    const res = await call('PUT', `/v1/deals/${deal.id}/won`, {
      create_case: true,
      case_data: { area: 'Trabalhista' },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      id: deal.id,
      status: 'ganho',
      final_value: 48000,
      won_at: expect.any(String),
      case_created: { id: expect.stringMatching(/^case_/), title: 'Contencioso trabalhista' },
    });
    const made = (await call('GET', `/v1/cases/${res.body.data.case_created.id}`)).body.data;
    expect(made).toMatchObject({
      title: 'Contencioso trabalhista',
      area: 'Trabalhista',
      status: 'ativo',
      client: { id: client.id, name: 'Transportes Lima' },
      responsible: { id: lawyer.id, name: 'Marina Rocha' },
    });

    const again = await call('PUT', `/v1/deals/${deal.id}/won`, {
      create_case: true,
      case_data: { area: 'Trabalhista' },
    });
    expectRefused(again, 'Deal already closed');
    const withKey = await sys.request(`/v1/deals/${deal.id}/won`, {
      method: 'PUT',
      key: t.api_key,
      headers: { 'idempotency-key': 'won-1' },
      body: JSON.stringify({ create_case: true, case_data: { area: 'Trabalhista' } }),
    });
    expect(withKey.status).toBe(422);
    expect((await casesOfClient(client.id)).total).toBe(1);
  });

  test('when case_data names a title, then the case has it; a deal without client or responsible makes a case without them', async () => {
    const deal = await createDeal({ title: 'Parecer societário' });
    const res = await call('PUT', `/v1/deals/${deal.id}/won`, {
      create_case: true,
      case_data: { title: 'Reestruturação societária', area: 'Empresarial' },
    });
    expect(res.body.data.case_created.title).toBe('Reestruturação societária');
    const made = (await call('GET', `/v1/cases/${res.body.data.case_created.id}`)).body.data;
    expect(made).toMatchObject({
      title: 'Reestruturação societária',
      area: 'Empresarial',
      client: null,
      responsible: null,
    });
  });

  test('when the same won request is sent 5 times at once, then one succeeds and one case exists', async () => {
    const other = (await call('POST', '/v1/clients', { type: 'PF', name: 'Rita Corrida' })).body.data;
    const deal = await createDeal({ title: 'Inventário', client_id: other.id });
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => call('PUT', `/v1/deals/${deal.id}/won`, { create_case: true })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 422, 422, 422, 422]);
    const winner = answers.find((a) => a.status === 200)!.body.data;
    const cases = await casesOfClient(other.id);
    expect(cases).toEqual({ total: 1, ids: [winner.case_created.id] });
  });

  test('when an attempt made the case and died before marking the deal won, then the retry gets that case and makes no other', async () => {
    const other = (await call('POST', '/v1/clients', { type: 'PF', name: 'Paulo Retentativa' })).body.data;
    const deal = await createDeal({ title: 'Revisional', client_id: other.id, responsible_id: lawyer.id });
    // What the first attempt did before it died: the cases service's POST under the deal's key.
    const cases = new DealCasesService({
      baseUrl: `http://127.0.0.1:${servicePort(sys.base, 'cases')}`,
      internalToken: INTERNAL_TOKEN,
    });
    const who = {
      teamId: t.team.id,
      userId: t.user.id,
      scopes: ['read' as const, 'write' as const],
      settings: defaultTeamSettings(),
    };
    const first = await cases.createForDeal(who, deal.id, {
      title: 'Revisional',
      area: 'Cível',
      client_id: other.id,
      responsible_id: lawyer.id,
    });
    // The client as the cases service's check found it, for the deal's event.
    expect(first.client).toEqual({
      id: other.id,
      name: 'Paulo Retentativa',
      type: 'PF',
      email: null,
      phone: null,
      status: 'active',
      updated_at: other.updated_at,
    });

    const retry = await call('PUT', `/v1/deals/${deal.id}/won`, { create_case: true, case_data: { area: 'Cível' } });
    expect(retry.status).toBe(200);
    expect(retry.body.data.case_created).toEqual({ id: first.id, title: 'Revisional' });
    expect((await casesOfClient(other.id)).total).toBe(1);
  });
});

/** The run's store, straight (what a process left there). */
const withStore = async (fn: (client: MongoClient) => Promise<unknown>) => {
  const client = await MongoClient.connect(process.env.MONGO_URL!);
  try {
    await fn(client);
  } finally {
    await client.close();
  }
};

describe('won with create_case: the case carries its deal', () => {
  const attemptThatDied = async (title: string) => {
    const other = (await call('POST', '/v1/clients', { type: 'PF', name: `Cliente ${title}` })).body.data;
    const deal = await createDeal({ title, client_id: other.id });
    // What an attempt did before it died: it asked the cases service for the deal's case (the deal itself is not written before that).
    const request = { title, area: null, client_id: other.id, responsible_id: null };
    const first = await casesService().createForDeal(teamWho(), deal.id, request);
    return { deal, client: other, first };
  };
  const casesService = () =>
    new DealCasesService({
      baseUrl: `http://127.0.0.1:${servicePort(sys.base, 'cases')}`,
      internalToken: INTERNAL_TOKEN,
    });
  const teamWho = () => ({
    teamId: t.team.id,
    userId: t.user.id,
    scopes: ['read' as const, 'write' as const],
    settings: defaultTeamSettings(),
  });

  test("when five attempts ask the cases service for one deal's case at once, then they all get the one case", async () => {
    const other = (await call('POST', '/v1/clients', { type: 'PF', name: 'Cinco de uma vez' })).body.data;
    const deal = await createDeal({ title: 'Cinco de uma vez', client_id: other.id });
    const request = { title: 'Cinco de uma vez', area: null, client_id: other.id, responsible_id: null };
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => casesService().createForDeal(teamWho(), deal.id, request)),
    );
    expect(new Set(answers.map((a) => a.id)).size).toBe(1);
    expect(await casesOfClient(other.id)).toEqual({ total: 1, ids: [answers[0].id] });
  });

  test('when the retry comes after every Idempotency-Key of the cases service is gone (24 h later), then it still gets the case the first attempt made', async () => {
    const { deal, client: other, first } = await attemptThatDied('Retomada tardia');
    await withStore((db) => db.db(`${sys.env.MONGO_DB_PREFIX}cases`).collection('idempotency_keys').deleteMany({}));
    const retry = await call('PUT', `/v1/deals/${deal.id}/won`, { create_case: true });
    expect(retry.status).toBe(200);
    expect(retry.body.data.case_created).toEqual({ id: first.id, title: 'Retomada tardia' });
    expect(await casesOfClient(other.id)).toEqual({ total: 1, ids: [first.id] });
  });

  test("when a caller sends an Idempotency-Key with the deals service's prefix, then 400, and the deal is still won with its case", async () => {
    const other = (await call('POST', '/v1/clients', { type: 'PF', name: 'Chave tomada' })).body.data;
    const deal = await createDeal({ title: 'Chave tomada', client_id: other.id });
    const taken = await sys.request('/v1/cases', {
      method: 'POST',
      key: t.api_key,
      headers: { 'content-type': 'application/json', 'idempotency-key': `deal-won-case:${deal.id}` },
      body: JSON.stringify({ title: 'Outro caso', client_id: other.id }),
    });
    const e = expectInvalid(
      { status: taken.status, body: await taken.json() },
      'Idempotency-Key must not start with deal-won-case:',
    );
    expect(e.details).toEqual({ field: 'Idempotency-Key', type: 'invalid' });
    const won = await call('PUT', `/v1/deals/${deal.id}/won`, { create_case: true });
    expect(won.status).toBe(200);
    expect(await casesOfClient(other.id)).toEqual({ total: 1, ids: [won.body.data.case_created.id] });
  });

  test('when the deal is lost after an attempt made its case and before the deal was marked won, then the case is archived', async () => {
    const { deal, first } = await attemptThatDied('Perdido no meio');
    expect((await call('PUT', `/v1/deals/${deal.id}/lost`, { loss_reason: 'Desistiu' })).status).toBe(200);
    expect((await call('GET', `/v1/cases/${first.id}`)).body.data).toMatchObject({
      status: 'arquivado',
      archived_at: expect.any(String),
    });
    expectRefused(await call('PUT', `/v1/deals/${deal.id}/won`, { create_case: true }), 'Deal already closed');
  });

  test('when the deal is archived after an attempt made its case and before the deal was marked won, then the case is archived too', async () => {
    const { deal, first } = await attemptThatDied('Arquivado no meio');
    expect((await call('DELETE', `/v1/deals/${deal.id}`)).status).toBe(200);
    expect((await call('GET', `/v1/cases/${first.id}`)).body.data.status).toBe('arquivado');
  });
});

describe('pipeline phases', () => {
  test('when a team removes a deal phase in use, then 422 Phase in use; an unused one can go', async () => {
    const team = sys.team('Fases de Venda');
    await createDeal({ title: 'Em negociação', phase: 'negociacao' }, team.api_key);
    const without = (name: string) => defaultTeamSettings().deal_phases.filter((p) => p.name !== name);
    const res = await call('PUT', '/v1/settings', { deal_phases: without('negociacao') }, team.api_key);
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      message: 'Phase in use',
      details: { phases: ['negociacao'] },
    });
    expect((await call('PUT', '/v1/settings', { deal_phases: without('fechamento') }, team.api_key)).status).toBe(200);
    expectInvalid(await call('POST', '/v1/deals', { title: 'X', phase: 'fechamento' }, team.api_key), 'Invalid phase');
  });
});

describe('deal events at a webhook', () => {
  test('when a deal is created, updated, moved, won and another lost, then a subscribed receiver gets each with the spec payload', async () => {
    const team = sys.team('Ganchos de Vendas');
    const types = ['deal.created', 'deal.updated', 'deal.phase_changed', 'deal.won', 'deal.lost'];
    const hook = (await call('POST', '/v1/webhooks', { url: `${receiver.url}/deals`, events: types }, team.api_key))
      .body.data;
    expect(hook.id).toMatch(/^wh_/);
    const deal = await createDeal({ title: 'Due diligence', value: 9000, source: 'evento' }, team.api_key);
    await call('PUT', `/v1/deals/${deal.id}`, { value: 9500.5 }, team.api_key);
    await call('PUT', `/v1/deals/${deal.id}/phase`, { phase: 'proposta' }, team.api_key);
    await call('PUT', `/v1/deals/${deal.id}/won`, {}, team.api_key);
    const gone = await createDeal({ title: 'Perdida', value: 100 }, team.api_key);
    await call('PUT', `/v1/deals/${gone.id}/lost`, { loss_reason: 'Preço', competitor: 'Outro' }, team.api_key);

    const payloads = () =>
      receiver.requests.filter((r) => r.path === '/deals').map((r) => ({ req: r, body: JSON.parse(r.body) }));
    const of = (type: string, id: string) =>
      payloads().filter((p) => p.body.type === type && p.body.data.object.id === id);
    await waitFor(
      'the deal events at the receiver',
      () => of('deal.won', deal.id).length === 1 && of('deal.lost', gone.id).length === 1,
      30_000,
    );

    const created = of('deal.created', deal.id)[0].body;
    expect(Object.keys(created).sort()).toEqual([
      'api_version',
      'created_at',
      'data',
      'id',
      'team_id',
      'type',
      'webhook_id',
    ]);
    expect(created).toMatchObject({
      api_version: 'v1',
      team_id: team.team.id,
      webhook_id: hook.id,
      data: { previous_attributes: null },
    });
    expect(created.id).toMatch(/^evt_/);

    const updated = of('deal.updated', deal.id).map((p) => p.body.data.previous_attributes);
    expect(updated).toEqual([{ value: 9000 }, { phase: 'lead', previous_phase: null, phase_changed_at: null }]);
    expect(of('deal.phase_changed', deal.id)[0].body.data).toMatchObject({
      object: { phase: 'proposta', previous_phase: 'lead' },
      previous_attributes: { phase: 'lead' },
    });

    // The object is the deal in its detail read shape after the change (ai_insights and activities_count, read-time figures, apart).
    const won = of('deal.won', deal.id)[0];
    const { ai_insights, activities_count, ...detail } = (
      await call('GET', `/v1/deals/${deal.id}`, undefined, team.api_key)
    ).body.data;
    expect(ai_insights).toMatchObject({
      win_probability: 100,
      health: 'good',
      risk_factors: [],
      basis: { days_in_phase: null, open_activities: null },
    });
    expect(activities_count).toBe(0);
    expect(won.body.data).toEqual({
      object: detail,
      previous_attributes: { status: 'ativo', final_value: null, won_at: null },
    });
    expect(of('deal.lost', gone.id)[0].body.data.object).toMatchObject({
      status: 'perdido',
      loss_reason: 'Preço',
      competitor: 'Outro',
    });

    const h = won.req.headers;
    expect(h['x-service-event-id']).toBe(won.body.id);
    expect(h['x-service-signature']).toBe(
      createHmac('sha256', hook.secret)
        .update(`${String(h['x-service-timestamp'])}.${won.req.body}`)
        .digest('hex'),
    );
  });
});

test('when activities are linked to a deal, then its detail counts them, as the activities service has them', async () => {
  const deal = (await call('POST', '/v1/deals', { title: 'Com atividades', client_id: client.id })).body.data;
  expect((await call('GET', `/v1/deals/${deal.id}`)).body.data.activities_count).toBe(0);
  for (const title of ['Ligar', 'Enviar proposta']) {
    expect((await call('POST', '/v1/activities', { type: 'task', title, deal_id: deal.id })).status).toBe(201);
  }
  expect((await call('POST', '/v1/activities', { type: 'task', title: 'Outra coisa' })).status).toBe(201);
  const detail = await call('GET', `/v1/deals/${deal.id}`);
  expect(detail.status).toBe(200);
  expect(detail.body.data.activities_count).toBe(2);
});
