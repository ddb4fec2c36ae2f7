// GET /v1/activities in process: filters, sorting and the team's zone
// (the other endpoints: activities-api.test.ts).
import { expectInvalid } from '@lpm/test-kit/error-answers';
import { day, identity } from '@lpm/test-kit/teams';
import { activitiesSuite, call, create, ISO_MS, sut, ZONE } from './activities-suite.ts';

activitiesSuite();

describe('GET /v1/activities', () => {
  const team = identity(ZONE);
  const ids: Record<string, string> = {};
  let caseId: string;
  let userId: string;

  beforeAll(async () => {
    caseId = sut.world.addCase(team.teamId, 'Ação', '123').id;
    userId = sut.world.addUser(team.teamId, 'Ana', 'ana@x.br').id;
    ids.none = (await create({ type: 'note', title: 'Sem prazo', priority: 'baixa' }, team)).id;
    ids.late = (
      await create({ type: 'deadline', title: 'Atrasada', due_date: day(-2), priority: 'alta', case_id: caseId }, team)
    ).id;
    ids.today = (
      await create({ type: 'task', title: 'Hoje', due_date: day(0), due_time: '00:00', assigned_to: userId }, team)
    ).id;
    ids.later = (await create({ type: 'meeting', title: 'Depois', due_date: day(10) }, team)).id;
    ids.done = (await create({ type: 'task', title: 'Feita', due_date: day(-5) }, team)).id;
    await call('PUT', `/v1/activities/${ids.done}/complete`, {}, team);
  });

  const list = async (qs = '') => {
    const res = await call('GET', `/v1/activities${qs}`, undefined, team);
    expect(res.statusCode).toBe(200);
    return res.json();
  };

  test('when listed with no parameters, then by due date ascending, no due date last, with the list item shape', async () => {
    const body = await list();
    expect(body.data.map((a: { id: string }) => a.id)).toEqual([ids.done, ids.late, ids.today, ids.later, ids.none]);
    expect(body.pagination).toEqual({ page: 1, limit: 20, total: 5, pages: 1 });
    expect(body.data[1]).toEqual({
      id: ids.late,
      type: 'deadline',
      title: 'Atrasada',
      description: null,
      status: 'pending',
      priority: 'alta',
      due_date: day(-2),
      case: { id: caseId, title: 'Ação', number: '123' },
      assigned_to: null,
      created_at: expect.stringMatching(ISO_MS),
    });
    expect(body.data[2].assigned_to).toEqual({ id: userId, name: 'Ana' });
  });

  test('when sorted descending by due date, then still no due date last; by priority, by meaning', async () => {
    expect((await list('?sort=-due_date')).data.map((a: { id: string }) => a.id)).toEqual([
      ids.later,
      ids.today,
      ids.late,
      ids.done,
      ids.none,
    ]);
    const byPriority = (await list('?sort=-priority')).data.map((a: { priority: string }) => a.priority);
    expect(byPriority[0]).toBe('alta');
    expect(byPriority.at(-1)).toBe('baixa');
    expectInvalid(await call('GET', '/v1/activities?sort=title', undefined, team), 'Invalid sort field');
  });

  test('when filtered, then only matching activities come back', async () => {
    const idsOf = async (qs: string) => (await list(qs)).data.map((a: { id: string }) => a.id).sort();
    expect(await idsOf('?type=meeting')).toEqual([ids.later]);
    expect(await idsOf('?status=completed')).toEqual([ids.done]);
    expect(await idsOf('?priority=alta')).toEqual([ids.late]);
    expect(await idsOf(`?case_id=${caseId}`)).toEqual([ids.late]);
    expect(await idsOf(`?assigned_to=${userId}`)).toEqual([ids.today]);
    expect(await idsOf(`?from=${day(-2)}&to=${day(0)}`)).toEqual([ids.late, ids.today].sort());
    expect(await idsOf('?overdue=true')).toEqual([ids.late, ids.today].sort());
  });

  test('when a filter is outside its list, then 400 with its message', async () => {
    expectInvalid(await call('GET', '/v1/activities?type=x', undefined, team), 'Invalid type');
    expectInvalid(await call('GET', '/v1/activities?status=x', undefined, team), 'Invalid status');
    expectInvalid(await call('GET', '/v1/activities?priority=x', undefined, team), 'Invalid priority');
    expectInvalid(
      await call('GET', '/v1/activities?limit=101', undefined, team),
      'limit must be an integer from 1 to 100',
    );
  });

  test('when paged, then page 2 holds the rest and a page past the end is empty with the true total', async () => {
    const p2 = await list('?limit=2&page=2');
    expect(p2.data.map((a: { id: string }) => a.id)).toEqual([ids.today, ids.later]);
    const past = await list('?limit=2&page=9');
    expect(past.data).toEqual([]);
    expect(past.pagination).toEqual({ page: 9, limit: 2, total: 5, pages: 3 });
  });

  test('when the overdue list is asked, then open activities past their due moment with days_overdue in calendar days', async () => {
    const res = await call('GET', '/v1/activities/overdue', undefined, team);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.data).toEqual([
      {
        id: ids.late,
        type: 'deadline',
        title: 'Atrasada',
        status: 'pending',
        priority: 'alta',
        due_date: day(-2),
        days_overdue: 2,
        case: { id: caseId, title: 'Ação' },
      },
      {
        id: ids.today,
        type: 'task',
        title: 'Hoje',
        status: 'pending',
        priority: 'media',
        due_date: day(0),
        days_overdue: 0,
        case: null,
      },
    ]);
    expect(body.pagination).toEqual({ page: 1, limit: 20, total: 2, pages: 1 });
  });
});
