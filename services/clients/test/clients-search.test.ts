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
import { SEARCH_WINDOWS, searchSuite, type SearchGrid } from '@lpm/test-kit/search-pages';
import { startClients } from './helper.ts';

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

/** The plain query's filter and sort for the same query string. */
function plain(params: URLSearchParams) {
  const search = params.get('search')!.trim();
  const or: Record<string, RegExp>[] = [{ search_text: new RegExp(escapeRegex(foldText(search))) }];
  const bare = search.replace(/[\s.\-/]/g, '');
  if (/^\d+$/.test(bare)) or.push({ document_digits: new RegExp(escapeRegex(bare)) });
  const filter: Record<string, unknown> = { team_id: who.teamId, $or: or };
  for (const f of ['type', 'status', 'segment']) if (params.get(f)) filter[f] = params.get(f);
  const sortParam = params.get('sort') ?? '-created_at';
  const direction = sortParam.startsWith('-') ? -1 : 1;
  return { filter, sort: { [SORT_FIELD[sortParam.replace('-', '')]]: direction, _id: direction } as const };
}

const SEARCHES = ['jose', 'JOSÉ', '456.789', '12345678900', '12.abc', '0001', 'example.com', '  ana ', 'nobody'];
const GRID: SearchGrid = {
  searches: SEARCHES,
  sorts: ['', 'sort=created_at', 'sort=name', 'sort=-name', 'sort=updated_at', 'sort=-updated_at'],
  filters: ['type=PJ', 'status=inactive', 'segment=vip', 'status=active&segment=premium', 'type=PF&status=active'],
  windows: SEARCH_WINDOWS,
  windowSort: 'sort=name',
};

const cpf = (i: number) => `${String(123 + i).padStart(3, '0')}.456.789-${String(i % 100).padStart(2, '0')}`;
const cnpj = (i: number) => `12.ABC.${String(345 + i).padStart(3, '0')}/0001-${String(i % 100).padStart(2, '0')}`;

searchSuite({
  noun: 'clients',
  path: '/v1/clients',
  collection: 'clients',
  who,
  start: startClients,
  startReplica: (dbName) => startClients({ dbName }),
  seed: async (sut, call) => {
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
      const res = await call('POST', '/v1/clients', body);
      expect(res.statusCode).toBe(201);
      made.push(res.json().data.id);
    }
    await call('DELETE', `/v1/clients/${made[4]}`);
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
  plain,
  grid: GRID,
  heldMoreThan: 120,
  replicaWrites: {
    named: 'creates, renames and deactivates',
    queries: [
      'search=jos%C3%A9&limit=50',
      'search=jose&status=inactive&sort=name',
      'search=renomeado&sort=-updated_at',
      'search=456789&sort=name',
    ],
    changing: 'search=jose&limit=50',
    create: (i) => ({ type: 'PF', name: `José novo ${i}`, cpf: cpf(200 + i) }),
    change: (i) => ({ name: `Renomeado ${i}` }),
    searchesAfter: SEARCHES.slice(0, 3),
  },
});
