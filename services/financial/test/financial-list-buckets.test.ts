// GET /v1/financial by day buckets of the record's date (shared/src/store/list-buckets.ts):
// the pages and totals the plain query gives, across days and with many records on
// one date, after writes that move, pay and cancel records, and for records stored
// before the markers existed.
import { newId } from '@lpm/shared/ids';
import { bucketedListSuite } from '@lpm/test-kit/bucketed-list-suite';
import { expectSamePages, WINDOWS_OVER_FORTY, WINDOWS_OVER_TWENTY, type PageCheck } from '@lpm/test-kit/list-pages';
import type { FinancialRecord } from '../src/data/financial-entity.ts';
import { FinancialRepository } from '../src/data/financial-repository.ts';
import { day as dayAfter, identity } from '@lpm/test-kit/teams';
import { startFinancial, type FinancialUnderTest } from './helper.ts';
import { NO_RELAY } from '@lpm/test-kit/service-parts';

const ZONE = 'America/Sao_Paulo';
const DAY = 86_400_000;
const day = (offset: number) => dayAfter(offset, '2026-03-10');
const dayNumber = (offset: number) => Math.floor(Date.parse(`${day(offset)}T00:00:00Z`) / DAY);

const { sut, call, create, put, listOf, expectBackfillKeepsPages } = bucketedListSuite<
  FinancialUnderTest,
  FinancialRecord
>({
  start: startFinancial,
  collection: 'financial_records',
  path: '/v1/financial',
  sortKeys: ['date'],
  repository: (db) => new FinancialRepository(db, NO_RELAY),
  defaults: { type: 'revenue', category: 'honorarios', description: 'Honorários', amount: 100, date: day(0) },
});

const CHECKS: PageCheck[] = [
  { query: '', equal: {}, direction: -1 },
  { query: 'sort=date', equal: {}, direction: 1 },
  { query: 'status=pending', equal: { status: 'pending' }, direction: -1 },
  { query: 'type=expense&category=custas', equal: { type: 'expense', category: 'custas' }, direction: -1 },
  { query: 'sort=date&status=paid', equal: { status: 'paid' }, direction: 1 },
  // A period of dates: whole days of the buckets.
  {
    query: `from=${day(0)}&to=${day(1)}`,
    equal: {},
    direction: -1,
    range: { days: { from: dayNumber(0), to: dayNumber(1) }, filter: { date: { $gte: day(0), $lte: day(1) } } },
  },
  {
    query: `sort=date&type=expense&from=${day(1)}`,
    equal: { type: 'expense' },
    direction: 1,
    range: { days: { from: dayNumber(1) }, filter: { date: { $gte: day(1) } } },
  },
  {
    query: `status=pending&to=${day(-1)}`,
    equal: { status: 'pending' },
    direction: -1,
    range: { days: { to: dayNumber(-1) }, filter: { date: { $lte: day(-1) } } },
  },
];

describe('GET /v1/financial by day buckets', () => {
  it('when records fall on several dates (many on one), then every page in either order, filtered by type, status and category, is the plain query page', async () => {
    const who = identity(ZONE);
    for (let i = 0; i < 44; i++) {
      const type = ['revenue', 'expense'][i % 2];
      const id = await create(who, {
        date: day([0, 1, 1, 1, 30, -400][i % 6]),
        type,
        category: type === 'expense' && i % 3 ? 'custas' : 'honorarios',
      });
      if (i % 4 === 1) await put(who, id, { status: 'paid' });
    }
    await expectSamePages(listOf(who), who.teamId, CHECKS, WINDOWS_OVER_FORTY);
  });

  it('when records are created, moved to other dates, paid and cancelled at once, then pages and totals are the plain query ones', async () => {
    const who = identity(ZONE);
    const ids = await Promise.all(
      Array.from({ length: 24 }, (_, i) => create(who, { date: day(i % 3), type: 'expense', category: 'custas' })),
    );
    await Promise.all([
      ...ids.slice(0, 4).map((id) => call(who, 'DELETE', `/v1/financial/${id}`)),
      ...ids.slice(4, 9).map((id, i) => put(who, id, { date: day(7 + (i % 2)) })),
      put(who, ids[9], { date: day(-31), category: 'honorarios' }),
      ...ids.slice(12, 16).map((id) => put(who, id, { status: 'paid' })),
      ...ids.slice(16, 18).map((id) => put(who, id, { date: day(8), status: 'cancelled' })),
      ...Array.from({ length: 4 }, () => create(who, { date: day(7), type: 'expense', category: 'custas' })),
    ]);
    // A second process writing the same days: its own counts coalescing, the same lock.
    const other = new FinancialRepository(sut().db, NO_RELAY);
    await other.update(who.teamId, ids[20], async () => ({
      result: undefined,
      write: { set: { date: day(1) }, events: [] },
    }));
    await other.update(who.teamId, ids[21], async () => ({
      result: undefined,
      write: { set: { date: day(2), status: 'paid' }, events: [] },
    }));
    const checks: PageCheck[] = [
      ...CHECKS,
      { query: 'status=cancelled', equal: { status: 'cancelled' }, direction: -1 },
    ];
    await expectSamePages(listOf(who), who.teamId, checks, WINDOWS_OVER_TWENTY);
    expect((await listOf(who).api('')).total).toBe(28);
    expect((await listOf(who).api('status=cancelled')).total).toBe(6);
  });

  it('when records were stored before the markers, then they are listed by the plain query until the backfill, and by day buckets after it, the same', async () => {
    const who = identity(ZONE);
    await expectBackfillKeepsPages(who, {
      direction: -1,
      count: 14,
      legacy: (fields, i) => ({ ...fields, _id: newId('fin'), date: day(-Math.floor(i / 3)) }),
      equal: { status: 'pending' },
    });
  });
});
