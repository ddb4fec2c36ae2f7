// GET /v1/clients?search= answered in process (shared/src/store/search-index.ts):
// every page and total is the plain query's (the store's regular expressions over
// search_text, and document_digits for a query of digits, sorted, skipped and
// counted) on the same clients, with filters, sorts and pages, and after clients are
// created, renamed and deactivated on another replica of the service sharing the store.
import { newId } from '@lpm/shared/ids';
import { escapeRegex, foldText } from '@lpm/shared/text';
import type { ClientRecord } from '../src/data/client-entity.ts';
import { derivedFields } from '../src/domain/client-shape.ts';
import { identity } from '@lpm/test-kit/teams';
import { replicasForSuite } from '@lpm/test-kit/service-under-test';
import { idsOf, plainIds } from '@lpm/test-kit/list-pages';
import { expectPlainPages, searchQueries, writeOnEitherReplica, type SearchGrid } from '@lpm/test-kit/search-pages';
import { startClients, type ClientsUnderTest } from './helper.ts';

let sut: ClientsUnderTest;
/** A second replica of the service on the same database. */
let replica: ClientsUnderTest;
const who = identity();

const SORT_FIELD: Record<string, string> = { created_at: 'created_at', updated_at: 'updated_at', name: 'name_sort' };
const NAMES = [
  'José Álvares',
  'ana beatriz',
  'Zeta Consultoria',
  'Ômega Advocacia',
  'Bruno',
  'JOSÉ da Silva',
  'Ana Maria',
];
const SEGMENTS = ['vip', 'premium', 'regular', 'occasional', null] as const;

const call = (app: ClientsUnderTest, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
  app.call(who, { method, url, payload: payload as never });

/** The API's page: ids and total. */
const api = async (app: ClientsUnderTest, query: string) => idsOf(await call(app, 'GET', `/v1/clients?${query}`));

/** The plain query's page for the same query string. */
async function plain(query: string) {
  const params = new URLSearchParams(query);
  const search = params.get('search')!.trim();
  const or: Record<string, RegExp>[] = [{ search_text: new RegExp(escapeRegex(foldText(search))) }];
  const bare = search.replace(/[\s.\-/]/g, '');
  if (/^\d+$/.test(bare)) or.push({ document_digits: new RegExp(escapeRegex(bare)) });
  const filter: Record<string, unknown> = { team_id: who.teamId, $or: or };
  for (const f of ['type', 'status', 'segment']) if (params.get(f)) filter[f] = params.get(f);
  const page = Number(params.get('page') ?? 1);
  const limit = Number(params.get('limit') ?? 20);
  const sortParam = params.get('sort') ?? '-created_at';
  const direction = sortParam.startsWith('-') ? -1 : 1;
  const sort = { [SORT_FIELD[sortParam.replace('-', '')]]: direction, _id: direction } as const;
  return plainIds(sut.db, 'clients', filter, sort, (page - 1) * limit, limit);
}

const expectPlain = (app: ClientsUnderTest, queries: string[]) =>
  expectPlainPages((query) => api(app, query), plain, queries);

const SEARCHES = ['jose', 'JOSÉ', '456.789', '12345678900', '12.abc', '0001', 'example.com', '  ana ', 'nobody'];
const SORTS = ['', 'sort=created_at', 'sort=name', 'sort=-name', 'sort=updated_at', 'sort=-updated_at'];
const FILTERS = ['type=PJ', 'status=inactive', 'segment=vip', 'status=active&segment=premium', 'type=PF&status=active'];
const PAGES = ['page=2&limit=7', 'page=4&limit=5', 'page=30&limit=10', 'limit=50'];
const GRID: SearchGrid = {
  searches: SEARCHES,
  sorts: SORTS,
  filters: FILTERS,
  windows: PAGES,
  windowSort: 'sort=name',
};

const cpf = (i: number) => `${String(123 + i).padStart(3, '0')}.456.789-${String(i % 100).padStart(2, '0')}`;
const cnpj = (i: number) => `12.ABC.${String(345 + i).padStart(3, '0')}/0001-${String(i % 100).padStart(2, '0')}`;

replicasForSuite(
  startClients,
  (dbName) => startClients({ dbName }),
  async (started, second) => {
    [sut, replica] = [started, second];
    const made: string[] = [];
    for (const [i, name] of NAMES.entries()) {
      const pj = i % 3 === 2;
      const body = {
        type: pj ? 'PJ' : 'PF',
        name,
        email: i % 2 ? `${foldText(name).replace(/ /g, '.')}@example.com` : null,
        segment: SEGMENTS[i % 4],
        ...(pj ? { cnpj: cnpj(i) } : { cpf: cpf(i) }),
      };
      const res = await call(sut, 'POST', '/v1/clients', body);
      expect(res.statusCode).toBe(201);
      made.push(res.json().data.id);
    }
    await call(sut, 'DELETE', `/v1/clients/${made[4]}`);
    // Copies over a few days, some at one instant (ties broken by id), as the record store inserts them.
    const template = (await sut.db.collection<ClientRecord>('clients').findOne({ _id: made[0] }))!;
    const day0 = Date.parse('2026-03-01T15:00:00Z');
    for (let i = 10; i < 130; i++) {
      const pj = i % 4 === 0;
      const record: ClientRecord = {
        ...template,
        _id: newId('cli'),
        type: pj ? 'PJ' : 'PF',
        name: `${NAMES[i % NAMES.length]} ${i % 3 ? i : ''}`.trim(),
        email: i % 2 ? `cliente${i}@example.com` : null,
        cpf: pj || i % 5 === 0 ? null : cpf(i),
        cnpj: pj ? cnpj(i) : null,
        segment: SEGMENTS[i % SEGMENTS.length],
        status: i % 7 === 0 ? 'inactive' : 'active',
        created_at: new Date(day0 + Math.floor(i / 3) * 3_600_000),
        updated_at: new Date(day0 + i * 1000),
      };
      await sut.repository.insert({ ...record, ...derivedFields(record) }, []);
    }
    // Another team's clients under the same names are never found.
    await sut.call(identity(), { method: 'POST', url: '/v1/clients', payload: { type: 'PF', name: 'José Álvares' } });
  },
);

test('when clients are searched with filters, sorts and pages, then each page and total is the plain query page, answered in process', async () => {
  await expectPlain(sut, searchQueries(GRID));
  expect(sut.repository.search.held).toBeGreaterThan(120);
}, 240_000);

test('when another replica creates, renames and deactivates clients, then each replica finds them as they are at its next search', async () => {
  const q = [
    'search=jos%C3%A9&limit=50',
    'search=jose&status=inactive&sort=name',
    'search=renomeado&sort=-updated_at',
    'search=456789&sort=name',
  ];
  await expectPlain(replica, q);
  const ids = (await api(sut, 'search=jose&limit=50')).ids;
  await writeOnEitherReplica(
    {
      replicas: [sut, replica],
      create: (writer, i) =>
        call(writer, 'POST', '/v1/clients', { type: 'PF', name: `José novo ${i}`, cpf: cpf(200 + i) }),
      change: (writer, id, i) => call(writer, 'PUT', `/v1/clients/${id}`, { name: `Renomeado ${i}` }),
      remove: (writer, id) => call(writer, 'DELETE', `/v1/clients/${id}`),
      expectFound: (reader) => expectPlain(reader, q),
    },
    ids,
  );
  await expectPlain(replica, searchQueries(GRID, SEARCHES.slice(0, 3)));
}, 240_000);
