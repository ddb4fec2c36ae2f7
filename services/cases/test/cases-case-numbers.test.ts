// GET /internal/case-numbers: every team's cases by id, page after page, for the
// publications service's first fill of its view of case numbers.
import { identity } from '@lpm/test-kit/teams';
import { startCases, type CasesUnderTest } from './helper.ts';

let sut: CasesUnderTest;

beforeAll(async () => {
  sut = await startCases();
});

afterAll(async () => {
  await sut.close();
});

interface NumbersPage {
  items: { id: string; team_id: string; number: string | null; updated_at: string }[];
  next: string | null;
}

test('when two teams have cases, then pages by id list every case of both with its team, number and updated_at, and the last page says no next', async () => {
  const [a, b] = [identity(), identity()];
  const made: { id: string; team_id: string; number: string | null; updated_at: string }[] = [];
  for (const [who, number] of [
    [a, '0000001-12.2024.8.26.0100'],
    [b, '0000002-12.2024.8.26.0100'],
    [a, null],
  ] as const) {
    const res = await sut.call(who, { method: 'POST', url: '/v1/cases', payload: { title: 'Caso', number } });
    expect(res.statusCode).toBe(201);
    const c = res.json().data;
    made.push({ id: c.id, team_id: who.teamId, number: c.number, updated_at: c.updated_at });
  }
  // Whatever team the caller names: the list is of every team.
  const caller = identity();
  const pages: NumbersPage[] = [];
  let after: string | null = null;
  do {
    const res = await sut.call(caller, {
      method: 'GET',
      url: `/internal/case-numbers?limit=2${after ? `&after=${after}` : ''}`,
    });
    expect(res.statusCode).toBe(200);
    pages.push(res.json().data as NumbersPage);
    after = pages.at(-1)!.next;
  } while (after !== null && pages.length < 5);
  expect(pages.map((p) => p.items.length)).toEqual([2, 1]);
  expect(pages.flatMap((p) => p.items)).toEqual([...made].sort((x, y) => (x.id < y.id ? -1 : 1)));
});

test('when the internal credential is missing, then 401', async () => {
  const res = await sut.app.inject({ method: 'GET', url: '/internal/case-numbers' });
  expect(res.statusCode).toBe(401);
});

test('when the limit is out of range, then 400', async () => {
  const res = await sut.call(identity(), { method: 'GET', url: '/internal/case-numbers?limit=1001' });
  expect(res.statusCode).toBe(400);
});
