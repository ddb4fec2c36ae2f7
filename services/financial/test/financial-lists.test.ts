// GET /v1/financial and /v1/financial/overdue in process: filters, sorting and the
// team's zone (the record endpoints: financial-api.test.ts).
import { testEachInvalid } from '@lpm/test-kit/error-tables';
import { day, identity } from '@lpm/test-kit/teams';
import { create, del, financialSuite, get, sut, who, ZONE } from './financial-suite.ts';

financialSuite();

describe('GET /v1/financial', () => {
  test('when listed, then filters apply, the default sort is -date, and items have nested case and client', async () => {
    const client = sut.neighbours.addClient(who.teamId, 'Cliente Lista');
    const kase = sut.neighbours.addCase(who.teamId, 'Caso Lista', 'N-1');
    const a = await create({ date: '2026-01-05', amount: 10, client_id: client.id, case_id: kase.id });
    const b = await create({
      date: '2026-01-20',
      amount: 30,
      type: 'expense',
      category: 'aluguel',
      due_date: '2026-02-01',
    });
    const c = await create({ date: '2026-02-01', amount: 20, type: 'cost', category: 'custas', status: 'paid' });
    await create({ date: '2026-03-01' }, identity(ZONE)); // another team's

    const all = (await get('/v1/financial')).json();
    expect(all.data.map((r: { id: string }) => r.id)).toEqual([c.id, b.id, a.id]);
    expect(all.pagination).toEqual({ page: 1, limit: 20, total: 3, pages: 1 });
    expect(all.data[2]).toEqual({
      id: a.id,
      type: 'revenue',
      category: 'honorarios',
      description: 'Honorários iniciais',
      amount: 10,
      currency: 'BRL',
      date: '2026-01-05',
      due_date: null,
      status: 'pending',
      case: { id: kase.id, title: 'Caso Lista', number: 'N-1' },
      client: { id: client.id, name: 'Cliente Lista' },
      created_at: a.created_at,
    });
    const ids = async (q: string) => (await get(`/v1/financial?${q}`)).json().data.map((r: { id: string }) => r.id);
    expect(await ids('type=expense')).toEqual([b.id]);
    expect(await ids('status=paid')).toEqual([c.id]);
    expect(await ids('category=honorarios')).toEqual([a.id]);
    expect(await ids(`client_id=${client.id}`)).toEqual([a.id]);
    expect(await ids(`case_id=${kase.id}`)).toEqual([a.id]);
    expect(await ids('from=2026-01-20&to=2026-02-01')).toEqual([c.id, b.id]);
    expect(await ids('sort=amount')).toEqual([a.id, c.id, b.id]);
    expect(await ids('sort=-amount')).toEqual([b.id, c.id, a.id]);
    expect(await ids('sort=date')).toEqual([a.id, b.id, c.id]);
    // Records without a due date come last in either direction.
    expect((await ids('sort=due_date'))[0]).toBe(b.id);
    expect((await ids('sort=-due_date'))[0]).toBe(b.id);
    expect(await ids('sort=created_at&limit=2&page=2')).toEqual([c.id]);
  });

  testEachInvalid('the query', (q: string) => get(`/v1/financial?${q}`), [
    ['type=income', 'Invalid type'],
    ['status=late', 'Invalid status'],
    ['from=2026-02-30', 'Invalid date format'],
    ['sort=title', 'Invalid sort field'],
    ['limit=101', 'limit must be an integer from 1 to 100'],
  ]);
});

describe('GET /v1/financial/overdue', () => {
  test('when pending records are past their due date, then they are listed with days_overdue in the team zone, oldest first; paid, cancelled and due today are not', async () => {
    const client = sut.neighbours.addClient(who.teamId, 'Devedor');
    const late = await create({ due_date: day(-3), client_id: client.id });
    const later = await create({ due_date: day(-1), type: 'expense', category: 'aluguel', amount: 99.99 });
    await create({ due_date: day(0) });
    await create({ due_date: day(-2), status: 'paid' });
    const cancelled = await create({ due_date: day(-2) });
    await del(cancelled.id);
    const res = await get('/v1/financial/overdue');
    expect(res.statusCode).toBe(200);
    expect(res.json().pagination).toEqual({ page: 1, limit: 20, total: 2, pages: 1 });
    expect(res.json().data).toEqual([
      {
        id: late.id,
        type: 'revenue',
        category: 'honorarios',
        description: 'Honorários iniciais',
        amount: 1500.5,
        due_date: day(-3),
        days_overdue: 3,
        client: { id: client.id, name: 'Devedor' },
      },
      {
        id: later.id,
        type: 'expense',
        category: 'aluguel',
        description: 'Honorários iniciais',
        amount: 99.99,
        due_date: day(-1),
        days_overdue: 1,
        client: null,
      },
    ]);
    expect((await get('/v1/financial/overdue?sort=-due_date')).json().data.map((r: { id: string }) => r.id)).toEqual([
      later.id,
      late.id,
    ]);
  });

  test('when the team zone has already reached the next day, then days_overdue counts in that zone', async () => {
    const tokyo = identity('Asia/Tokyo');
    // 2026-03-10 16:00 UTC is 2026-03-11 01:00 in Tokyo.
    sut.setNow(new Date('2026-03-10T16:00:00Z'));
    try {
      const r = await create({ due_date: '2026-03-09' }, tokyo);
      expect((await get('/v1/financial/overdue', tokyo)).json().data).toEqual([
        expect.objectContaining({ id: r.id, days_overdue: 2 }),
      ]);
    } finally {
      sut.setNow(undefined);
    }
  });
});
