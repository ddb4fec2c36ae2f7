// GET /v1/deals: the list item shape, every filter, every sort (nulls last, ties
// by id) and paging, on the app in process with its own database.
import type { Identity } from '@lpm/shared/identity';
import { newId } from '@lpm/shared/ids';
import { testEachInvalid } from '@lpm/test-kit/error-tables';
import type { ClientFacts } from '@lpm/shared/upstream/clients-service';
import { identity } from '@lpm/test-kit/teams';
import { expectOnlyPage } from '@lpm/test-kit/list-answers';
import { startDeals, type DealsUnderTest } from './helper.ts';

let sut: DealsUnderTest;
let who: Identity;
const client: ClientFacts = {
  id: newId('cli'),
  name: 'Construtora Ágil',
  type: 'PJ',
  email: 'a@agil.com',
  phone: null,
  status: 'active',
  updated_at: new Date().toISOString(),
};
const lawyer = { id: newId('user'), name: 'Carlos Lima', email: 'carlos@lima.adv.br' };
const ids: Record<string, string> = {};

const list = async (query: string) => {
  const res = await sut.call(who, { method: 'GET', url: `/v1/deals${query}` });
  expect(res.statusCode).toBe(200);
  return res.json();
};
/** Moves a deal's creation instant, with its list marker, and counts both days again, as a migration would. */
async function backdate(id: string, createdAt: Date) {
  const before = await sut.db.collection('deals').findOneAndUpdate(
    { _id: id as never },
    {
      $set: {
        created_at: createdAt,
        ...sut.repository.lists.markerOf({ team_id: who.teamId, created_at: createdAt }),
      },
    },
  );
  await sut.repository.lists.recount(before!);
  await sut.repository.lists.recount({ team_id: who.teamId, created_at: createdAt });
}
const titles = async (query: string) => (await list(query)).data.map((d: { title: string }) => d.title);

beforeAll(async () => {
  sut = await startDeals({
    clients: { facts: async (_, id) => (id === client.id ? client : null) },
    users: { find: async (_, wanted) => new Map(wanted.includes(lawyer.id) ? [[lawyer.id, lawyer]] : []) },
  });
  who = identity();
  const seed: [string, Record<string, unknown>, string][] = [
    // title, body, created_at (UTC)
    [
      'Bruno consultoria',
      { value: 5000, probability: 30, expected_close_date: '2027-02-01', source: 'site', client_id: client.id },
      '2026-01-09T12:00:00.000Z',
    ],
    [
      'Ágata contrato',
      {
        value: 20000,
        phase: 'proposta',
        expected_close_date: '2027-01-15',
        source: 'indicacao',
        responsible_id: lawyer.id,
      },
      '2026-01-10T02:00:00.000Z',
    ],
    ['Carla parecer', { value: 750.25, phase: 'negociacao', source: 'site' }, '2026-01-10T12:00:00.000Z'],
    ['Daniel sem valor', { phase: 'proposta' }, '2026-01-11T12:00:00.000Z'],
    [
      'Elisa auditoria',
      { value: 20000, probability: 90, client_id: client.id, source: 'linkedin' },
      '2026-01-12T12:00:00.000Z',
    ],
  ];
  for (const [title, body, createdAt] of seed) {
    const res = await sut.call(who, { method: 'POST', url: '/v1/deals', payload: { title, ...body } });
    expect(res.statusCode).toBe(201);
    ids[title] = res.json().data.id;
    await backdate(ids[title], new Date(createdAt));
  }
  await sut.call(who, { method: 'PUT', url: `/v1/deals/${ids['Carla parecer']}/won`, payload: {} });
  // Another team's deal never shows.
  await sut.call(identity(), { method: 'POST', url: '/v1/deals', payload: { title: 'Alheio', value: 1 } });
});

afterAll(async () => {
  await sut?.close();
});

describe('GET /v1/deals', () => {
  test('when no parameter is sent, then the newest deals come first with the list item shape and the pagination block', async () => {
    const body = await list('');
    expectOnlyPage(body, 'title', [
      'Elisa auditoria',
      'Daniel sem valor',
      'Carla parecer',
      'Ágata contrato',
      'Bruno consultoria',
    ]);
    expect(body.data[4]).toEqual({
      id: ids['Bruno consultoria'],
      title: 'Bruno consultoria',
      value: 5000,
      currency: 'BRL',
      phase: 'lead',
      probability: 30,
      status: 'ativo',
      expected_close_date: '2027-02-01',
      client: { id: client.id, name: 'Construtora Ágil', type: 'PJ' },
      responsible: null,
      source: 'site',
      created_at: '2026-01-09T12:00:00.000Z',
    });
    expect(body.data[3].responsible).toEqual({ id: lawyer.id, name: 'Carlos Lima' });
  });

  test('when filtered by status, phase, client, responsible or source, then only matching deals are listed', async () => {
    expect(await titles('?status=ganho')).toEqual(['Carla parecer']);
    expect(await titles('?phase=proposta')).toEqual(['Daniel sem valor', 'Ágata contrato']);
    expect(await titles(`?client_id=${client.id}`)).toEqual(['Elisa auditoria', 'Bruno consultoria']);
    expect(await titles(`?responsible_id=${lawyer.id}`)).toEqual(['Ágata contrato']);
    expect(await titles('?source=site')).toEqual(['Carla parecer', 'Bruno consultoria']);
    expect(await titles('?status=ativo&source=site')).toEqual(['Bruno consultoria']);
  });

  test('when filtered by min_value and max_value, then the bounds are inclusive and deals without a value are left out', async () => {
    expect(await titles('?min_value=5000')).toEqual(['Elisa auditoria', 'Ágata contrato', 'Bruno consultoria']);
    expect(await titles('?max_value=750.25')).toEqual(['Carla parecer']);
    expect(await titles('?min_value=750.25&max_value=5000')).toEqual(['Carla parecer', 'Bruno consultoria']);
  });

  test("when filtered by from and to, then the creation day counts in the team's time zone", async () => {
    // 2026-01-10T02:00Z is 2026-01-09 23:00 in São Paulo.
    expect(await titles('?from=2026-01-10&to=2026-01-11')).toEqual(['Daniel sem valor', 'Carla parecer']);
    expect(await titles('?to=2026-01-09')).toEqual(['Ágata contrato', 'Bruno consultoria']);
    const utc = identity('UTC');
    utc.teamId = who.teamId;
    const res = await sut.call(utc, { method: 'GET', url: '/v1/deals?from=2026-01-10&to=2026-01-10' });
    expect(res.json().data.map((d: { title: string }) => d.title)).toEqual(['Carla parecer', 'Ágata contrato']);
  });

  test('when sorted by each allowed field, then the order follows it, without accents, nulls last either way', async () => {
    expect(await titles('?sort=title')).toEqual([
      'Ágata contrato',
      'Bruno consultoria',
      'Carla parecer',
      'Daniel sem valor',
      'Elisa auditoria',
    ]);
    expect(await titles('?sort=created_at')).toEqual([
      'Bruno consultoria',
      'Ágata contrato',
      'Carla parecer',
      'Daniel sem valor',
      'Elisa auditoria',
    ]);
    const [agata, elisa] = [ids['Ágata contrato'], ids['Elisa auditoria']].sort();
    const tie = [agata, elisa].map((id) => (id === ids['Ágata contrato'] ? 'Ágata contrato' : 'Elisa auditoria'));
    expect(await titles('?sort=value')).toEqual(['Carla parecer', 'Bruno consultoria', ...tie, 'Daniel sem valor']);
    expect(await titles('?sort=-value')).toEqual([
      ...[...tie].reverse(),
      'Bruno consultoria',
      'Carla parecer',
      'Daniel sem valor',
    ]);
    expect(await titles('?sort=-probability')).toEqual([
      'Elisa auditoria',
      'Carla parecer',
      'Daniel sem valor',
      'Ágata contrato',
      'Bruno consultoria',
    ]);
    expect((await titles('?sort=expected_close_date')).slice(0, 2)).toEqual(['Ágata contrato', 'Bruno consultoria']);
    expect((await titles('?sort=-expected_close_date')).slice(0, 2)).toEqual(['Bruno consultoria', 'Ágata contrato']);
    expect((await titles('?sort=-updated_at'))[0]).toBe('Carla parecer');
  });

  test('when paged, then page and limit cut the list and a page past the end is empty with the true total', async () => {
    const second = await list('?sort=title&limit=2&page=2');
    expect(second.data.map((d: { title: string }) => d.title)).toEqual(['Carla parecer', 'Daniel sem valor']);
    expect(second.pagination).toEqual({ page: 2, limit: 2, total: 5, pages: 3 });
    const past = await list('?limit=2&page=9');
    expect(past.data).toEqual([]);
    expect(past.pagination).toEqual({ page: 9, limit: 2, total: 5, pages: 3 });
  });

  testEachInvalid('the query', (q: string) => sut.call(who, { method: 'GET', url: `/v1/deals${q}` }), [
    ['?sort=color', 'Invalid sort field'],
    ['?status=fechado', 'Invalid status'],
    ['?phase=triagem', 'Invalid phase'],
    ['?min_value=abc', 'min_value must be a number >= 0'],
    ['?limit=101', 'limit must be an integer from 1 to 100'],
    ['?from=2026-02-30', 'from must be a date (YYYY-MM-DD)'],
  ]);
});
