// GET /v1/cases, a case's timeline and activities, and the scopes, through the
// gateway of a running system (the other endpoints: cases-api.test.ts).
import { userCreateArgs } from '@lpm/test-kit/cli';
import { type IssuedTeam } from '@lpm/test-kit/running-system';
import { expectError } from '@lpm/test-kit/api';
import { expectInvalid, expectNotFound } from '@lpm/test-kit/error-answers';
import { testEachInvalid } from '@lpm/test-kit/error-tables';
import { expectOnlyPage } from '@lpm/test-kit/list-answers';
import { call, casesSuite, createCase, ISO_MS, sys, t } from './cases-suite.ts';

casesSuite('caseslists');

describe('GET /v1/cases', () => {
  let team: IssuedTeam;
  const list = async (query: string) => {
    const res = await call('GET', `/v1/cases${query}`, undefined, team.api_key);
    expect(res.status).toBe(200);
    return res.body;
  };
  const titles = async (query: string) => (await list(query)).data.map((c: { title: string }) => c.title);
  let listed: { lawyerId: string; clientId: string };

  beforeAll(async () => {
    team = sys.team('Lista');
    const user = sys.admin(...userCreateArgs(team.team.id, 'Carla', 'carla@lista.adv')).user;
    const c = (await call('POST', '/v1/clients', { type: 'PF', name: 'João Pereira' }, team.api_key)).body.data;
    listed = { lawyerId: user.id, clientId: c.id };
    const make = (body: Record<string, unknown>) => createCase(body, team.api_key);
    await make({
      title: 'Ação Revisional',
      number: 'REV-10',
      priority: 'baixa',
      area: 'Cível',
      sla_date: '2027-03-01',
    });
    await make({ title: 'Inventário', priority: 'alta', area: 'Família', client_id: c.id, responsible_id: user.id });
    await make({
      title: 'Execução fiscal',
      number: '5000123-00.2026.4.03.6100',
      priority: 'media',
      area: 'Tributário',
      phase: 'triagem',
      sla_date: '2027-01-10',
    });
    const archived = await make({ title: 'Antigo', priority: 'alta' });
    await call('DELETE', `/v1/cases/${archived.id}`, undefined, team.api_key);
  });

  test('when listed with no parameters, then newest first, 20 per page, with nested client and responsible', async () => {
    const body = await list('');
    expectOnlyPage(body, 'title', ['Antigo', 'Execução fiscal', 'Inventário', 'Ação Revisional']);
    const inventario = body.data.find((c: { title: string }) => c.title === 'Inventário');
    expect(Object.keys(inventario).sort()).toEqual(
      [
        'activities_count',
        'area',
        'client',
        'created_at',
        'documents_count',
        'id',
        'number',
        'phase',
        'priority',
        'responsible',
        'sla_date',
        'status',
        'subject',
        'title',
        'updated_at',
      ].sort(),
    );
    expect(inventario.client).toEqual({ id: listed.clientId, name: 'João Pereira', type: 'PF' });
    expect(inventario.responsible).toEqual({ id: listed.lawyerId, name: 'Carla' });
  });

  test('when filtered, then only matching cases come back', async () => {
    expect(await titles('?status=arquivado')).toEqual(['Antigo']);
    expect(await titles('?phase=triagem')).toEqual(['Execução fiscal']);
    expect(await titles('?priority=alta&status=ativo')).toEqual(['Inventário']);
    expect(await titles('?area=Cível')).toEqual(['Ação Revisional']);
    expect(await titles(`?client_id=${listed.clientId}`)).toEqual(['Inventário']);
    expect(await titles(`?responsible_id=${listed.lawyerId}`)).toEqual(['Inventário']);
  });

  test('when searched, then title and number match without regard to case or accents', async () => {
    expect(await titles('?search=acao')).toEqual(['Ação Revisional']);
    expect(await titles('?search=EXECUÇÃO')).toEqual(['Execução fiscal']);
    expect(await titles('?search=rev-1')).toEqual(['Ação Revisional']);
    expect(await titles('?search=5000123')).toEqual(['Execução fiscal']);
  });

  test('when from/to name today in the team zone, then the cases of today are in; tomorrow or yesterday only, none', async () => {
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Sao_Paulo' }).format(new Date());
    const shift = (days: number) =>
      new Date(Date.parse(`${today}T12:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
    expect((await list(`?from=${today}&to=${today}`)).pagination!.total).toBe(4);
    expect((await list(`?from=${shift(1)}`)).pagination!.total).toBe(0);
    expect((await list(`?to=${shift(-1)}`)).pagination!.total).toBe(0);
  });

  test('when sorted by priority, then by meaning; by sla_date, cases without one come last both ways; ties by id', async () => {
    expect(await titles('?sort=-priority&status=ativo')).toEqual(['Inventário', 'Execução fiscal', 'Ação Revisional']);
    expect(await titles('?sort=priority&status=ativo')).toEqual(['Ação Revisional', 'Execução fiscal', 'Inventário']);
    expect(await titles('?sort=sla_date&status=ativo')).toEqual(['Execução fiscal', 'Ação Revisional', 'Inventário']);
    expect(await titles('?sort=-sla_date&status=ativo')).toEqual(['Ação Revisional', 'Execução fiscal', 'Inventário']);
    expect(await titles('?sort=title')).toEqual(['Ação Revisional', 'Antigo', 'Execução fiscal', 'Inventário']);
  });

  test('when paged, then page 2 holds the rest and a page past the end is empty with the true total', async () => {
    const second = await list('?limit=3&page=2');
    expect(second.data).toHaveLength(1);
    expect(second.pagination).toEqual({ page: 2, limit: 3, total: 4, pages: 2 });
    expect((await list('?page=9')).data).toEqual([]);
  });

  testEachInvalid('the query', (q: string) => call('GET', `/v1/cases${q}`, undefined, team.api_key), [
    ['?sort=number', 'Invalid sort field'],
    ['?status=fechado', 'Invalid status'],
    ['?priority=x', 'Invalid priority'],
    ['?phase=lead', 'Invalid phase'],
    ['?limit=101', 'limit must be an integer from 1 to 100'],
    ['?from=2026-13-01', 'from must be a date (YYYY-MM-DD)'],
  ]);
});

describe('GET /v1/cases/{id}/timeline', () => {
  test('when a case was created, moved, edited and archived, then the timeline lists those events newest first with the acting user', async () => {
    const created = await createCase({ title: 'Linha do tempo' });
    await call('PUT', `/v1/cases/${created.id}`, { phase: 'triagem' });
    await call('PUT', `/v1/cases/${created.id}`, { title: 'Linha do tempo revista', priority: 'alta' });
    await call('DELETE', `/v1/cases/${created.id}`);
    const res = await call('GET', `/v1/cases/${created.id}/timeline`);
    expect(res.status).toBe(200);
    expect(res.body.pagination).toBeUndefined();
    expect(res.body.data.map((e: { type: string }) => e.type)).toEqual([
      'status_change',
      'case_updated',
      'phase_change',
      'case_created',
    ]);
    expect(res.body.data[1].description).toBe('Updated title, priority');
    expect(res.body.data[2].description).toBe('Phase changed from recebido to triagem');
    for (const e of res.body.data) {
      expect(e).toEqual({
        id: expect.stringMatching(/^evt_/),
        type: e.type,
        description: expect.any(String),
        user: { id: t.user.id, name: 'Owner of Silva Advogados' },
        created_at: expect.stringMatching(ISO_MS),
      });
    }
    expect(
      (await call('GET', `/v1/cases/${created.id}/timeline?limit=2`)).body.data.map((e: { type: string }) => e.type),
    ).toEqual(['status_change', 'case_updated']);
  });

  test('when limit is over 100 or the case unknown, then 400 or 404', async () => {
    const created = await createCase({ title: 'Limite' });
    expectInvalid(
      await call('GET', `/v1/cases/${created.id}/timeline?limit=101`),
      'limit must be an integer from 1 to 100',
    );
    expectNotFound(await call('GET', '/v1/cases/case_01jd3k0000000000000000000/timeline'), 'Case not found');
  });
});

describe('GET /v1/cases/{id}/activities', () => {
  test('when the case is unknown, then 404 Case not found before the activities service is asked', async () => {
    expectNotFound(await call('GET', '/v1/cases/case_01jd3k0000000000000000000/activities'), 'Case not found');
  });

  test('when the sort field is not an activity field, then 400 Invalid sort field', async () => {
    const created = await createCase({ title: 'Atividades' });
    expectInvalid(await call('GET', `/v1/cases/${created.id}/activities?sort=title`), 'Invalid sort field');
  });

  test('when the case exists and has no activities, then an empty page from the activities service', async () => {
    const created = await createCase({ title: 'Atividades' });
    const res = await call('GET', `/v1/cases/${created.id}/activities`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: [], pagination: { page: 1, limit: 20, total: 0, pages: 0 } });
  });
});

describe('scopes', () => {
  test('when a read-only key writes, then 403; it can still read', async () => {
    const key = sys.admin('key', 'create', '--team', t.team.id, '--user', t.user.id, '--scopes', 'read').api_key;
    expectError(await call('POST', '/v1/cases', { title: 'X' }, key), 403, 'FORBIDDEN', 'Insufficient permissions');
    expect((await call('GET', '/v1/cases', undefined, key)).status).toBe(200);
  });
});
