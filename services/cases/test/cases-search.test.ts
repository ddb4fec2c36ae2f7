// GET /v1/cases?search= answered in process (shared/src/store/search-index.ts): every
// page and total is the plain query's (the store's regular expression over
// search_text, sorted, skipped and counted) on the same cases, with filters, sorts
// and pages, and after cases are created, changed and archived on another replica
// of the service sharing the store.
import { newId } from '@lpm/shared/ids';
import { sortOrder } from '@lpm/shared/http/pagination';
import { escapeRegex, foldText } from '@lpm/shared/text';
import { nextDay, zonedMoment } from '@lpm/shared/time';
import { PRIORITIES } from '@lpm/shared/priority';
import type { CaseRecord } from '../src/data/case-entity.ts';
import { derivedFields } from '../src/domain/case-shape.ts';
import { identity } from '@lpm/test-kit/teams';
import { SEARCH_WINDOWS, searchSuite, type SearchGrid } from '@lpm/test-kit/search-pages';
import { startCases } from './helper.ts';

const who = identity();

/** The list's sorts as the repository stores them. */
const SORT_KEYS = {
  created_at: ['created_at'],
  updated_at: ['updated_at'],
  title: ['title_sort'],
  priority: ['priority_rank'],
  sla_date: ['sla_missing', 'sla_date'],
};
const TITLES = [
  'Ação de cobrança',
  'Acao revisional',
  'Execução fiscal',
  'Divórcio consensual - José Silva',
  'Inventário de Maria Souza',
  'Reclamação trabalhista',
  'ÁGUA e esgoto',
  'zeta',
  'Ação de cobrança',
];
const DAY_MS = 86_400_000;

/** The plain query's filter and sort for the same query string. */
function plain(params: URLSearchParams) {
  const filter: Record<string, unknown> = {
    team_id: who.teamId,
    search_text: new RegExp(escapeRegex(foldText(params.get('search')!.trim()))),
  };
  for (const f of ['status', 'priority', 'area', 'phase', 'client_id']) if (params.get(f)) filter[f] = params.get(f);
  const [from, to] = [params.get('from'), params.get('to')];
  if (from || to) {
    filter.created_at = {
      ...(from ? { $gte: zonedMoment(from, who.settings.timezone, '00:00:00') } : {}),
      ...(to ? { $lt: zonedMoment(nextDay(to), who.settings.timezone, '00:00:00') } : {}),
    };
  }
  return { filter, sort: sortOrder(params.get('sort') ?? undefined, '-created_at', SORT_KEYS) };
}

const SEARCHES = ['ação', 'ACAO', 'jose silva', 'proc-00', '0001234', '  maria  ', 'água', 'nada disso'];
const GRID: SearchGrid = {
  searches: SEARCHES,
  sorts: [
    '',
    'sort=created_at',
    'sort=title',
    'sort=-title',
    'sort=priority',
    'sort=-sla_date',
    'sort=sla_date',
    'sort=updated_at',
  ],
  filters: [
    'status=arquivado',
    'priority=alta',
    'phase=triagem',
    'area=C%C3%ADvel',
    'status=ativo&priority=baixa',
    `from=2026-03-02&to=2026-03-05`,
  ],
  windows: SEARCH_WINDOWS,
  windowSort: 'sort=title',
};

searchSuite({
  noun: 'cases',
  path: '/v1/cases',
  collection: 'cases',
  who,
  start: startCases,
  startReplica: (dbName) => startCases({}, dbName),
  seed: async (sut, call) => {
    const made: string[] = [];
    for (const [i, title] of TITLES.entries()) {
      const body = {
        title,
        number: i % 3 === 0 ? null : `PROC-00${i}`,
        priority: PRIORITIES[i % 3],
        area: i % 2 ? 'Cível' : null,
        sla_date: i % 4 ? `2027-0${1 + (i % 3)}-10` : null,
      };
      const res = await call('POST', '/v1/cases', body);
      expect(res.statusCode).toBe(201);
      made.push(res.json().data.id);
    }
    const res = await call('POST', '/v1/cases', { title: 'CNJ', number: '0001234-56.2026.5.02.0001' });
    expect(res.statusCode).toBe(201);
    await call('DELETE', `/v1/cases/${made[1]}`);
    // Copies over a week, some at one instant (ties broken by id), as the record store inserts them.
    const template = (await sut.db.collection<CaseRecord>('cases').findOne({ _id: made[0] }))!;
    const day0 = Date.parse('2026-03-01T15:00:00Z');
    for (let i = 0; i < 120; i++) {
      const _id = newId('case');
      const priority = PRIORITIES[(i * 7) % 3];
      const record: CaseRecord = {
        ...template,
        _id,
        title: `${TITLES[i % TITLES.length]} ${i % 4 ? i : ''}`.trim(),
        number: i % 5 ? `PROC-00${i}-C` : null,
        status: i % 6 === 0 ? 'arquivado' : 'ativo',
        phase: ['recebido', 'triagem'][i % 2],
        priority,
        area: i % 3 ? 'Cível' : null,
        sla_date: i % 4 ? `2027-0${1 + (i % 5)}-1${i % 3}` : null,
        created_at: new Date(day0 + Math.floor(i / 3) * (DAY_MS / 8)),
        updated_at: new Date(day0 + i * 1000),
      };
      await sut.repository.insert({ ...record, ...derivedFields(record) }, []);
    }
    // Another team's cases under the same titles are never found.
    await sut.call(identity(), { method: 'POST', url: '/v1/cases', payload: { title: 'Ação de cobrança' } });
  },
  plain,
  grid: GRID,
  heldMoreThan: 120,
  replicaWrites: {
    named: 'creates, renames, moves and archives',
    queries: [
      'search=a%C3%A7%C3%A3o&limit=100',
      'search=a%C3%A7%C3%A3o&status=arquivado&sort=title',
      'search=renomeado&sort=-updated_at',
      'search=proc-001&sort=priority',
    ],
    changing: 'search=a%C3%A7%C3%A3o&limit=100',
    create: (i) => ({ title: `Ação nova ${i}`, number: `PROC-001${i}` }),
    change: (i) => ({ title: `Renomeado ${i}`, priority: 'alta' }),
    searchesAfter: SEARCHES.slice(0, 2),
  },
});
