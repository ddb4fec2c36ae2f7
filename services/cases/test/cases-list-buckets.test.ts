// GET /v1/cases by day buckets (shared/src/store/list-buckets.ts): the pages and
// totals the plain query gives, across days, after concurrent writes, and for cases
// stored before the markers existed.
import type { Identity } from '@lpm/shared/identity';
import { newId } from '@lpm/shared/ids';
import { DAY_MS } from '@lpm/shared/time';
import { parseSort, storeSort } from '@lpm/shared/http/pagination';
import type { CaseRecord } from '../src/data/case-entity.ts';
import { CasesRepository } from '../src/data/cases-repository.ts';
import { PRIORITIES, PRIORITY_RANK } from '@lpm/shared/priority';
import { identity } from '@lpm/test-kit/teams';
import { startCases, type CasesUnderTest } from './helper.ts';
import { bucketedListSuite } from '@lpm/test-kit/bucketed-list-suite';
import { createdApart, plainIds } from '@lpm/test-kit/list-pages';
import { NO_RELAY } from '@lpm/test-kit/service-parts';

const { sut, call, create, listOf, stored, expectBackfillKeepsPages } = bucketedListSuite<CasesUnderTest, CaseRecord>({
  start: startCases,
  collection: 'cases',
  path: '/v1/cases',
  sortKeys: ['created_at'],
  repository: (db) => new CasesRepository(db, NO_RELAY),
  defaults: { title: 'Ação de cobrança' },
});
const list = (who: Identity, query: string) => listOf(who).api(query);

/** The ids and total the plain query gives: every match sorted by created_at, then _id. */
const plain = (teamId: string, filter: object, direction: 1 | -1, skip: number, limit: number) =>
  plainIds(sut().db, 'cases', { team_id: teamId, ...filter }, storeSort(['created_at'], direction), skip, limit);

/** Copies of a case the API created, inserted as the record store inserts (its marker rewritten), created at the given instants. */
async function insertCopies(repository: CasesRepository, teamId: string, template: CaseRecord, instants: number[]) {
  for (const [i, at] of instants.entries()) {
    const _id = newId('case');
    const priority = PRIORITIES[i % 3];
    const record = {
      ...template,
      _id,
      team_id: teamId,
      number: null,
      number_key: `none:${_id}`,
      origin_key: `none:${_id}`,
      created_at: new Date(at),
      phase: ['recebido', 'triagem'][i % 2],
      priority,
      priority_rank: PRIORITY_RANK[priority],
    };
    await repository.insert(record, []);
  }
}

describe('GET /v1/cases by day buckets', () => {
  it('when cases span days (ties at one instant included), then every page, newest or oldest first and filtered by status, phase and priority, is the plain query page', async () => {
    const who = identity();
    const template = await stored(await create(who));
    const midnight = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    const instants = Array.from(
      { length: 45 },
      (_, i) => midnight - Math.floor(i / 4) * DAY_MS + (i % 4 === 3 ? -1 : i % 2 ? 0 : 60_000 * i),
    );
    await insertCopies(sut().repository, who.teamId, template, instants);
    await call(who, 'DELETE', `/v1/cases/${template._id}`);
    const checks: [string, object, 1 | -1][] = [
      ['', {}, -1],
      ['sort=created_at', {}, 1],
      ['status=ativo', { status: 'ativo' }, -1],
      ['phase=triagem', { phase: 'triagem' }, -1],
      ['status=ativo&phase=recebido&sort=created_at', { status: 'ativo', phase: 'recebido' }, 1],
      ['status=arquivado', { status: 'arquivado' }, -1],
      ['priority=alta', { priority: 'alta' }, -1],
      ['status=ativo&priority=baixa&sort=created_at', { status: 'ativo', priority: 'baixa' }, 1],
      ['status=ativo&phase=triagem&priority=media', { status: 'ativo', phase: 'triagem', priority: 'media' }, -1],
    ];
    for (const [query, filter, direction] of checks) {
      // Answered by day buckets, not by the plain query (which FerretDB sorts and counts in Go).
      const bucketed = await sut().repository.lists.listPage(
        who.teamId,
        filter,
        parseSort(direction === 1 ? 'created_at' : undefined, '-created_at'),
        { skip: 0, limit: 20 },
        {},
      );
      expect({ query, bucketed: bucketed !== null }).toEqual({ query, bucketed: true });
      for (const [page, limit] of [
        [1, 20],
        [2, 20],
        [3, 20],
        [2, 7],
        [5, 4],
        [9, 5],
      ]) {
        expect({ query, page, ...(await list(who, `${query}&page=${page}&limit=${limit}`)) }).toEqual({
          query,
          page,
          ...(await plain(who.teamId, filter, direction, (page - 1) * limit, limit)),
        });
      }
    }
  });

  it('when cases are created, archived and moved between phases at once, then the totals, filtered ones included, are the counts of the cases', async () => {
    const who = identity();
    const ids = await Promise.all(
      Array.from({ length: 24 }, (_, i) => create(who, { phase: i % 3 ? 'recebido' : 'triagem' })),
    );
    await Promise.all([
      ...ids.slice(0, 8).map((id) => call(who, 'DELETE', `/v1/cases/${id}`)),
      ...ids.slice(8, 16).map((id) => call(who, 'PUT', `/v1/cases/${id}`, { phase: 'em-andamento' })),
      ...Array.from({ length: 6 }, () => create(who, { phase: 'em-andamento' })),
    ]);
    // A second process writing the same days: its own counts coalescing, the same lock.
    const other = new CasesRepository(sut().db, NO_RELAY);
    await Promise.all([
      other.update(who.teamId, ids[20], async () => ({
        result: undefined,
        write: { set: { status: 'arquivado' }, events: [] },
      })),
      call(who, 'PUT', `/v1/cases/${ids[21]}`, { phase: 'finalizado' }),
    ]);
    for (const [query, filter] of [
      ['', {}],
      ['status=ativo', { status: 'ativo' }],
      ['status=arquivado', { status: 'arquivado' }],
      ['phase=em-andamento', { phase: 'em-andamento' }],
      ['status=ativo&phase=recebido', { status: 'ativo', phase: 'recebido' }],
      ['status=arquivado&phase=triagem', { status: 'arquivado', phase: 'triagem' }],
    ] as const) {
      expect({ query, ...(await list(who, `${query}&limit=100`)) }).toEqual({
        query,
        ...(await plain(who.teamId, filter, -1, 0, 100)),
      });
    }
    expect((await list(who, '')).total).toBe(30);
  });

  it("when another team's case carries a marker of the team's day (written straight to the store), then the team's pages and totals leave it out", async () => {
    const [who, other] = [identity(), identity()];
    const own = await Promise.all(Array.from({ length: 5 }, () => create(who)));
    const theirs = await stored(await create(other));
    const marked = (await sut().db.collection<CaseRecord & { list_bucket: string }>('cases').findOne({ _id: own[0] }))!;
    const _id = newId('case');
    // Newest of all, so a page that let it in would show it first.
    const intruder = {
      ...theirs,
      _id,
      number_key: `none:${_id}`,
      origin_key: `none:${_id}`,
      created_at: new Date(marked.created_at.getTime() + 1),
      list_bucket: marked.list_bucket,
    };
    await sut().db.collection<CaseRecord>('cases').insertOne(intruder);
    await sut().repository.lists.recount(marked);

    for (const query of ['', 'sort=created_at', 'status=ativo']) {
      const page = await list(who, query);
      expect({ query, ...page }).toEqual({
        query,
        ...(await plain(
          who.teamId,
          query === 'status=ativo' ? { status: 'ativo' } : {},
          query === 'sort=created_at' ? 1 : -1,
          0,
          20,
        )),
      });
      expect(page.ids).not.toContain(_id);
      expect(page.total).toBe(5);
    }
  });

  it('when cases were stored before the markers, then they are listed by the plain query until the backfill, and by day buckets after it, the same', async () => {
    const who = identity();
    await expectBackfillKeepsPages(who, {
      direction: -1,
      count: 12,
      legacy: createdApart('case', ['number_key', 'origin_key']),
      equal: { status: 'ativo' },
    });
  });
});
