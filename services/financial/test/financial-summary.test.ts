// GET /v1/financial/summary: figures equal hand-computed ones,
// cents exact, empty buckets included, ISO weeks across a year boundary.
import type { Identity } from '@lpm/shared/identity';
import { expectInvalid } from '@lpm/test-kit/error-answers';
import { dayIn } from '@lpm/shared/time';
import { bucketsBetween, isoWeek } from '../src/domain/summary-buckets.ts';
import { identity } from '@lpm/test-kit/teams';
import { startFinancial, type FinancialUnderTest } from './helper.ts';

const ZONE = 'America/Sao_Paulo';
let sut: FinancialUnderTest;
beforeAll(async () => {
  sut = await startFinancial();
});
afterAll(async () => {
  await sut.close();
});

const summary = (who: Identity, q = '') =>
  sut.call(who, { method: 'GET', url: `/v1/financial/summary${q ? `?${q}` : ''}` });
const create = async (who: Identity, payload: object) => {
  const res = await sut.call(who, {
    method: 'POST',
    url: '/v1/financial',
    payload: { description: 'x', category: 'geral', ...payload },
  });
  expect(res.statusCode).toBe(201);
  return res.json().data as { id: string };
};
const bucket = (key: string, name: string, revenue = 0, expense = 0, cost = 0, profit = revenue - expense - cost) => ({
  [key]: name,
  revenue,
  expense,
  cost,
  profit,
});

describe('ISO weeks', () => {
  test('when dates lie around new year, then weeks follow ISO 8601 (week 1 holds the first Thursday)', () => {
    expect(isoWeek('2026-12-28')).toBe('2026-W53');
    expect(isoWeek('2027-01-01')).toBe('2026-W53');
    expect(isoWeek('2027-01-03')).toBe('2026-W53');
    expect(isoWeek('2027-01-04')).toBe('2027-W01');
    expect(isoWeek('2024-12-30')).toBe('2025-W01');
    expect(isoWeek('2021-01-03')).toBe('2020-W53');
    expect(bucketsBetween('week', '2026-12-31', '2027-01-18', 100)).toEqual([
      '2026-W53',
      '2027-W01',
      '2027-W02',
      '2027-W03',
    ]);
    expect(bucketsBetween('month', '2026-11-15', '2027-02-01', 100)).toEqual([
      '2026-11',
      '2026-12',
      '2027-01',
      '2027-02',
    ]);
    expect(bucketsBetween('day', '2028-02-28', '2028-03-01', 100)).toEqual(['2028-02-28', '2028-02-29', '2028-03-01']);
    expect(bucketsBetween('day', '2026-01-01', '2026-12-31', 100)).toBeNull();
  });
});

describe('a team with all three types, all statuses, two currencies and records on both edges of the period', () => {
  const who = identity(ZONE);
  let clientA: string;
  let clientB: string;

  beforeAll(async () => {
    clientA = sut.neighbours.addClient(who.teamId, 'Cliente A').id;
    clientB = sut.neighbours.addClient(who.teamId, 'Cliente B').id;
    // Paid later through PUT: its summary keys move from pending to paid.
    const first = await create(who, {
      type: 'revenue',
      category: 'honorarios',
      amount: 0.1,
      date: '2026-12-28',
      client_id: clientA,
    });
    expect(
      (await sut.call(who, { method: 'PUT', url: `/v1/financial/${first.id}`, payload: { status: 'paid' } }))
        .statusCode,
    ).toBe(200);
    await create(who, {
      type: 'revenue',
      category: 'honorarios',
      amount: 0.2,
      date: '2027-01-01',
      client_id: clientA,
      status: 'paid',
    });
    await create(who, {
      type: 'revenue',
      category: 'exito',
      amount: 100.05,
      date: '2027-01-10',
      client_id: clientB,
      status: 'paid',
    });
    await create(who, { type: 'expense', category: 'aluguel', amount: 30.33, date: '2027-01-04', status: 'paid' });
    await create(who, { type: 'cost', category: 'custas', amount: 12.5, date: '2026-12-31', status: 'paid' });
    await create(who, { type: 'revenue', category: 'honorarios', amount: 50, date: '2027-01-02', client_id: clientB });
    await create(who, { type: 'expense', category: 'aluguel', amount: 7.77, date: '2027-01-05' });
    await create(who, { type: 'cost', category: 'pericia', amount: 3.3, date: '2026-12-29' });
    const cancelled = await create(who, {
      type: 'revenue',
      category: 'honorarios',
      amount: 999,
      date: '2027-01-03',
      client_id: clientA,
    });
    expect((await sut.call(who, { method: 'DELETE', url: `/v1/financial/${cancelled.id}` })).statusCode).toBe(200);
    await create(who, {
      type: 'revenue',
      category: 'honorarios',
      amount: 500,
      date: '2027-01-02',
      currency: 'USD',
      status: 'paid',
      client_id: clientA,
    });
    await create(who, {
      type: 'revenue',
      category: 'honorarios',
      amount: 1000,
      date: '2026-12-27',
      status: 'paid',
      client_id: clientA,
    }); // a day before
    await create(who, { type: 'expense', category: 'aluguel', amount: 44, date: '2027-01-11', status: 'paid' }); // a day after
    await create(identity(ZONE), {
      type: 'revenue',
      category: 'honorarios',
      amount: 77,
      date: '2027-01-02',
      status: 'paid',
    }); // another team
  });

  const period = 'from=2026-12-28&to=2027-01-10';
  const common = {
    period: { from: '2026-12-28', to: '2027-01-10' },
    currency: 'BRL',
    totals: { revenue: 100.35, expense: 30.33, cost: 12.5, profit: 57.52 },
    pending: { revenue: 50, expense: 7.77, cost: 3.3 },
    by_category: { honorarios: 0.3, exito: 100.05, aluguel: 30.33, custas: 12.5 },
  };
  const top = () => [
    { client_id: clientB, name: 'Cliente B', total_revenue: 100.05 },
    { client_id: clientA, name: 'Cliente A', total_revenue: 0.3 },
  ];

  test('when grouped by week, then the week straddling the year and the next are exact to the cent', async () => {
    const res = await summary(who, `${period}&group_by=week`);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({
      ...common,
      group_by: 'week',
      by_week: [bucket('week', '2026-W53', 0.3, 0, 12.5, -12.2), bucket('week', '2027-W01', 100.05, 30.33, 0, 69.72)],
      top_clients: top(),
    });
  });

  test('when grouped by month (the default), then both months are exact; a wider period includes empty months', async () => {
    const res = await summary(who, period);
    expect(res.json().data).toEqual({
      ...common,
      group_by: 'month',
      by_month: [bucket('month', '2026-12', 0.1, 0, 12.5, -12.4), bucket('month', '2027-01', 100.25, 30.33, 0, 69.92)],
      top_clients: top(),
    });
    const wide = (await summary(who, 'from=2026-11-01&to=2027-02-28')).json().data;
    expect(wide.by_month).toEqual([
      bucket('month', '2026-11'),
      bucket('month', '2026-12', 1000.1, 0, 12.5, 987.6),
      bucket('month', '2027-01', 100.25, 74.33, 0, 25.92),
      bucket('month', '2027-02'),
    ]);
    expect(wide.totals).toEqual({ revenue: 1100.35, expense: 74.33, cost: 12.5, profit: 1013.52 });
  });

  test('when grouped by day, then every day of the period is present, empty ones at zero', async () => {
    const res = await summary(who, `${period}&group_by=day`);
    const filled: Record<string, [number, number, number, number]> = {
      '2026-12-28': [0.1, 0, 0, 0.1],
      '2026-12-31': [0, 0, 12.5, -12.5],
      '2027-01-01': [0.2, 0, 0, 0.2],
      '2027-01-04': [0, 30.33, 0, -30.33],
      '2027-01-10': [100.05, 0, 0, 100.05],
    };
    const days = bucketsBetween('day', '2026-12-28', '2027-01-10', 100)!;
    expect(days).toHaveLength(14);
    expect(res.json().data).toEqual({
      ...common,
      group_by: 'day',
      by_day: days.map((d) => bucket('day', d, ...(filled[d] ?? [0, 0, 0, 0]))),
      top_clients: top(),
    });
  });

  test('when another currency is asked for, then only its records are summed', async () => {
    const res = await summary(who, `${period}&currency=usd`);
    expect(res.json().data).toMatchObject({
      currency: 'USD',
      totals: { revenue: 500, expense: 0, cost: 0, profit: 500 },
      pending: { revenue: 0, expense: 0, cost: 0 },
      by_category: { honorarios: 500 },
      top_clients: [{ client_id: clientA, name: 'Cliente A', total_revenue: 500 }],
    });
  });
});

describe('defaults, exactness and errors', () => {
  test('when 0.1 and 0.2 are paid this month, then the default period is the current month and revenue is exactly 0.3', async () => {
    const who = identity(ZONE);
    const today = dayIn(ZONE, new Date());
    await create(who, { type: 'revenue', amount: 0.1, date: today, status: 'paid' });
    await create(who, { type: 'revenue', amount: 0.2, date: today, status: 'paid' });
    const data = (await summary(who)).json().data;
    const first = `${today.slice(0, 7)}-01`;
    const last = new Date(Date.UTC(+today.slice(0, 4), +today.slice(5, 7), 0)).toISOString().slice(0, 10);
    expect(data.period).toEqual({ from: first, to: last });
    expect(data.totals.revenue).toBe(0.3);
    expect(data.totals.profit).toBe(0.3);
    expect(data.by_month).toEqual([bucket('month', today.slice(0, 7), 0.3, 0, 0, 0.3)]);
    expect(data.top_clients).toEqual([]);
  });

  test('when a team has more than five clients with revenue, then top_clients holds the five largest', async () => {
    const who = identity(ZONE);
    const ids: string[] = [];
    for (let i = 1; i <= 6; i++) {
      const c = sut.neighbours.addClient(who.teamId, `C${i}`).id;
      ids.push(c);
      await create(who, { type: 'revenue', amount: i * 10, date: '2026-05-10', status: 'paid', client_id: c });
    }
    const data = (await summary(who, 'from=2026-05-01&to=2026-05-31')).json().data;
    expect(data.top_clients.map((c: { name: string; total_revenue: number }) => [c.name, c.total_revenue])).toEqual([
      ['C6', 60],
      ['C5', 50],
      ['C4', 40],
      ['C3', 30],
      ['C2', 20],
    ]);
  });

  test('when parameters are invalid, then 400 with the exact message', async () => {
    const who = identity(ZONE);
    for (const [query, message] of [
      ['group_by=year', 'Invalid group_by'],
      ['from=2026-02-30', 'Invalid date format'],
      ['to=2026-1-1', 'Invalid date format'],
      ['from=2026-03-01&to=2026-02-01', 'from must not be after to'],
      ['currency=US', 'Invalid currency'],
      ['from=2000-01-01&to=2026-01-01&group_by=day', 'The period may span at most 3700 buckets'],
    ])
      expectInvalid(await summary(who, query), message);
  });
});
