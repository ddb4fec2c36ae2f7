import { identity } from '@lpm/test-kit/teams';
import { expectOnlyPage } from '@lpm/test-kit/list-answers';
import { testEachInvalid } from '@lpm/test-kit/error-tables';
import { startClients, type ClientsUnderTest } from './helper.ts';
import type { Identity } from '@lpm/shared/identity';

let sut: ClientsUnderTest;
const who: Identity = identity();
const ids: Record<string, string> = {};

const list = async (query: string, as = who) => sut.call(as, { method: 'GET', url: `/v1/clients?${query}` });
const names = async (query: string) => (await list(query)).json().data.map((c: { name: string }) => c.name);

beforeAll(async () => {
  sut = await startClients();
  const seed = [
    { type: 'PF', name: 'José Álvares', email: 'jose@alvares.com.br', cpf: '123.456.789-00', segment: 'vip' },
    { type: 'PF', name: 'ana beatriz', email: 'ana@example.com', segment: 'regular' },
    { type: 'PJ', name: 'Zeta Consultoria', cnpj: '12.ABC.345/0001-90', segment: 'premium' },
    { type: 'PJ', name: 'Ômega Advocacia', email: 'contato@omega.adv.br', cnpj: '98.765.432/0001-10' },
    { type: 'PF', name: 'Bruno', segment: 'vip' },
  ];
  for (const c of seed) {
    const res = await sut.call(who, { method: 'POST', url: '/v1/clients', payload: c });
    ids[c.name] = res.json().data.id;
  }
  await sut.call(who, { method: 'DELETE', url: `/v1/clients/${ids.Bruno}` });
  await sut.call(identity(), { method: 'POST', url: '/v1/clients', payload: { type: 'PF', name: 'Other team José' } });
});
afterAll(async () => {
  await sut.close();
});

test('when listing with no parameters, then the team’s clients come newest first with the pagination block', async () => {
  const res = await list('');
  expect(res.statusCode).toBe(200);
  const body = res.json();
  expect(body.success).toBe(true);
  expectOnlyPage(body, 'name', ['Bruno', 'Ômega Advocacia', 'Zeta Consultoria', 'ana beatriz', 'José Álvares']);
});

test('when listing, then each item has exactly the list fields, cpf for PF and cnpj for PJ', async () => {
  const data = (await list('sort=name')).json().data;
  const pf = data.find((c: { type: string }) => c.type === 'PF');
  const pj = data.find((c: { type: string }) => c.type === 'PJ');
  expect(Object.keys(pf).sort()).toEqual(
    ['cases_count', 'cpf', 'created_at', 'email', 'id', 'name', 'phone', 'segment', 'status', 'type'].sort(),
  );
  expect(Object.keys(pj).sort()).toEqual(
    ['cases_count', 'cnpj', 'created_at', 'email', 'id', 'name', 'phone', 'segment', 'status', 'type'].sort(),
  );
});

test('when sorting by name, then accents and case do not change the order, in both directions', async () => {
  expect(await names('sort=name')).toEqual([
    'ana beatriz',
    'Bruno',
    'José Álvares',
    'Ômega Advocacia',
    'Zeta Consultoria',
  ]);
  expect(await names('sort=-name')).toEqual([
    'Zeta Consultoria',
    'Ômega Advocacia',
    'José Álvares',
    'Bruno',
    'ana beatriz',
  ]);
});

test.each([
  ['type=PJ', ['Ômega Advocacia', 'Zeta Consultoria']],
  ['status=inactive', ['Bruno']],
  ['segment=vip', ['Bruno', 'José Álvares']],
  ['status=active&segment=vip', ['José Álvares']],
  ['search=jose', ['José Álvares']],
  ['search=%C3%94MEGA', ['Ômega Advocacia']],
  ['search=alvares.com', ['José Álvares']],
  ['search=12345678900', ['José Álvares']],
  ['search=456.789', ['José Álvares']],
  ['search=12.abc', ['Zeta Consultoria']],
  ['search=nobody', []],
])('when filtering with %s, then only the matching clients come back', async (query, expected) => {
  expect(await names(`${query}&sort=name`)).toEqual([...expected].sort((a, b) => a.localeCompare(b, 'pt')));
});

test('when paging, then pages do not overlap and a page past the end is empty with the true total', async () => {
  const first = (await list('limit=2&page=1&sort=created_at')).json();
  const second = (await list('limit=2&page=2&sort=created_at')).json();
  expect(first.pagination).toEqual({ page: 1, limit: 2, total: 5, pages: 3 });
  const seen = [...first.data, ...second.data].map((c: { id: string }) => c.id);
  expect(new Set(seen).size).toBe(4);
  const past = (await list('limit=2&page=9')).json();
  expect(past.data).toEqual([]);
  expect(past.pagination).toEqual({ page: 9, limit: 2, total: 5, pages: 3 });
});

testEachInvalid('the query', list, [
  ['type=XX', 'Invalid type'],
  ['status=deleted', 'Invalid status'],
  ['segment=gold', 'Invalid segment'],
  ['sort=email', 'Invalid sort field'],
  ['limit=101', 'limit must be an integer from 1 to 100'],
  ['limit=0', 'limit must be an integer from 1 to 100'],
  ['page=0', 'page must be an integer from 1 to 10000'],
  ['page=abc', 'page must be an integer from 1 to 10000'],
]);

test('when an unknown query parameter is sent, then it is ignored', async () => {
  expect((await list('colour=red')).statusCode).toBe(200);
});

test('when listing the cases of a client before any case exists, then an empty page; an unknown client is 404', async () => {
  const res = await sut.call(who, { method: 'GET', url: `/v1/clients/${ids['ana beatriz']}/cases` });
  expect(res.statusCode).toBe(200);
  expect(res.json()).toEqual({ success: true, data: [], pagination: { page: 1, limit: 20, total: 0, pages: 0 } });
  const missing = await sut.call(who, { method: 'GET', url: '/v1/clients/cli_01jd3kzzzzzzzzzzzzzzzzzzzz/cases' });
  expect(missing.statusCode).toBe(404);
  expect(missing.json().error.message).toBe('Client not found');
});
