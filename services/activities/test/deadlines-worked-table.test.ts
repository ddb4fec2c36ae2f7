// The worked table of services/activities/README.md through POST /v1/deadlines/compute.
// Every expected date below is worked by hand in the comment above it, from the
// articles cited and a printed calendar; none comes from the code under test.
// Calendar facts used: Easter 2025 is 20 April (Carnaval 3-4 March, Good Friday
// 18 April, Corpus Christi 19 June); Easter 2026 is 5 April (Carnaval 16-17 Feb).
import type { Identity } from '@lpm/shared/identity';
import { expectInvalid } from '@lpm/test-kit/error-answers';
import { serviceForSuite } from '@lpm/test-kit/service-under-test';
import { identity } from '@lpm/test-kit/teams';
import { startActivities, type ActivitiesUnderTest } from './helper.ts';

let sut: ActivitiesUnderTest;
const team = identity();

serviceForSuite(startActivities, (started) => (sut = started));

interface Trail {
  date: string;
  counted: boolean;
  reason: string | null;
}

async function compute(body: Record<string, unknown>, who = team) {
  const res = await sut.call(who, { method: 'POST', url: '/v1/deadlines/compute', payload: body });
  expect(res.statusCode).toBe(200);
  const data = res.json().data as {
    start_date: string;
    due_date: string;
    publication_date: string | null;
    days: number;
    trail: Trail[];
  };
  // Invariants of every trail: from the given date to the due date, one entry per
  // calendar day, `days` of them counted, the due date counted last.
  const given = Object.values(body.start as Record<string, string>)[0];
  expect(data.trail[0]).toEqual({ date: given, counted: false, reason: 'start day (CPC art. 224)' });
  expect(data.trail.at(-1)).toEqual({ date: data.due_date, counted: true, reason: null });
  expect(data.trail.filter((d) => d.counted)).toHaveLength(data.days);
  const dates = data.trail.map((d) => d.date);
  const span = (Date.parse(data.due_date) - Date.parse(given)) / 86_400_000 + 1;
  expect(new Set(dates).size).toBe(span);
  expect(dates).toHaveLength(span);
  return data;
}

/** The trail as `date reason` lines, `+` for a counted day. */
const lines = (trail: Trail[]) => trail.map((d) => `${d.date} ${d.counted ? '+' : d.reason}`);

const withCalendar = (calendar: Identity['settings']['court_calendar']): Identity => ({
  ...team,
  settings: { ...team.settings, court_calendar: calendar },
});

describe('the worked table (services/activities/README.md)', () => {
  test('1. when a 15-day count crosses the recess, then it stops on 19 Dec and resumes on 21 Jan', async () => {
    // Published Fri 12 Dec 2025; art. 224 §3: day 1 is Mon 15 Dec. Counted 15, 16, 17,
    // 18, 19 Dec (5). Art. 220: 20 Dec to 20 Jan suspended. Wed 21 Jan (6), 22 (7),
    // Fri 23 (8), Mon 26 (9), 27 (10), 28 (11), 29 (12), Fri 30 (13), Mon 2 Feb (14),
    // Tue 3 Feb 2026 (15).
    const d = await compute({ start: { published: '2025-12-12' }, days: 15 });
    expect(d).toMatchObject({ start_date: '2025-12-15', due_date: '2026-02-03', publication_date: null, days: 15 });
    const byDate = new Map(d.trail.map((t) => [t.date, t]));
    expect(byDate.get('2025-12-19')).toEqual({ date: '2025-12-19', counted: true, reason: null });
    expect(byDate.get('2025-12-22')?.reason).toBe('recess (CPC art. 220)');
    expect(byDate.get('2025-12-25')?.reason).toBe('holiday: Natal');
    expect(byDate.get('2026-01-20')?.reason).toBe('recess (CPC art. 220)');
    expect(byDate.get('2026-01-21')).toEqual({ date: '2026-01-21', counted: true, reason: null });
  });

  test('2. when Carnaval falls inside the count, then Monday and Tuesday are skipped', async () => {
    // Published Thu 27 Feb 2025; day 1 Fri 28 Feb (1); Sat 1, Sun 2; Carnaval Mon 3
    // and Tue 4 Mar (CPC art. 216, court closure); Wed 5 (2), Thu 6 (3), Fri 7 (4);
    // Sat 8, Sun 9; Mon 10 Mar 2025 (5).
    const d = await compute({ start: { published: '2025-02-27' }, days: 5 });
    expect(lines(d.trail)).toEqual([
      '2025-02-27 start day (CPC art. 224)',
      '2025-02-28 +',
      '2025-03-01 weekend',
      '2025-03-02 weekend',
      '2025-03-03 holiday: Carnaval (segunda-feira)',
      '2025-03-04 holiday: Carnaval (terça-feira)',
      '2025-03-05 +',
      '2025-03-06 +',
      '2025-03-07 +',
      '2025-03-08 weekend',
      '2025-03-09 weekend',
      '2025-03-10 +',
    ]);
  });

  test('3. when the count passes 20 Nov 2025, then Consciência Negra is a holiday (Lei 14.759/2023), and was not in 2023', async () => {
    // Made available Thu 13 Nov 2025; art. 224 §2: published Fri 14 Nov; §3: day 1
    // Mon 17 (1), 18 (2), 19 (3); Thu 20 Nov national holiday from 2024; Fri 21 (4);
    // Sat 22, Sun 23; Mon 24 Nov 2025 (5).
    const d = await compute({ start: { made_available: '2025-11-13' }, days: 5 });
    expect(d).toMatchObject({ publication_date: '2025-11-14', start_date: '2025-11-17', due_date: '2025-11-24' });
    expect(lines(d.trail)).toEqual([
      '2025-11-13 start day (CPC art. 224)',
      '2025-11-14 start day (CPC art. 224)',
      '2025-11-15 weekend',
      '2025-11-16 weekend',
      '2025-11-17 +',
      '2025-11-18 +',
      '2025-11-19 +',
      '2025-11-20 holiday: Dia da Consciência Negra',
      '2025-11-21 +',
      '2025-11-22 weekend',
      '2025-11-23 weekend',
      '2025-11-24 +',
    ]);
    // 2023, before the law: made available Thu 16 Nov, published Fri 17, day 1 Mon
    // 20 Nov (an ordinary day then), 21, 22, 23, Fri 24 Nov 2023 (5).
    const before = await compute({ start: { made_available: '2023-11-16' }, days: 5 });
    expect(before).toMatchObject({ publication_date: '2023-11-17', start_date: '2023-11-20', due_date: '2023-11-24' });
  });

  test('4. when the team closed its court for a day (PJe down), then that day does not count', async () => {
    // Published Fri 1 Aug 2025; day 1 Mon 4 (1); Tue 5 the team's closure (art. 224
    // §1: system unavailable); Wed 6 (2), Thu 7 (3), Fri 8 (4); Mon 11 Aug 2025 (5).
    // (11 Aug closes only the federal courts: Lei 5.010/1966 art. 62 IV.)
    const who = withCalendar({
      jurisdiction: { uf: null, branch: 'state' },
      closures: [{ date: '2025-08-05', name: 'PJe indisponível' }],
    });
    const d = await compute({ start: { published: '2025-08-01' }, days: 5 }, who);
    expect(d.due_date).toBe('2025-08-11');
    expect(d.trail.find((t) => t.date === '2025-08-05')).toEqual({
      date: '2025-08-05',
      counted: false,
      reason: 'team closure: PJe indisponível',
    });
  });

  test('5. when the time is doubled (the State, CPC art. 183), then 15 days count as 30', async () => {
    // Published Fri 5 Sep 2025; day 1 Mon 8 Sep. Weeks of 5 business days: 8-12 Sep
    // (1-5), 15-19 (6-10), 22-26 (11-15), Mon 29 and Tue 30 Sep, Wed 1 to Fri 3 Oct
    // (16-20), 6-10 Oct (21-25); Sun 12 Oct is a holiday on a Sunday; 13-17 Oct
    // (26-30): Fri 17 Oct 2025.
    const d = await compute({ start: { published: '2025-09-05' }, days: 15, double: true });
    expect(d).toMatchObject({ start_date: '2025-09-08', due_date: '2025-10-17', days: 30 });
  });

  test('6. when counting calendar days (CPP art. 798), then weekends and closures inside the count count', async () => {
    // Intimated Mon 16 Jun 2025; CPP art. 798 §1 / Súmula 310: day 1 Tue 17 Jun;
    // day 10 is 9 days later, Thu 26 Jun 2025, a business day. Corpus Christi (Thu
    // 19) and the weekend of 21-22 Jun count.
    const d = await compute({ start: { from: '2025-06-16' }, days: 10, counting: 'calendar' });
    expect(d).toMatchObject({ start_date: '2025-06-17', due_date: '2025-06-26', days: 10 });
    expect(d.trail.find((t) => t.date === '2025-06-19')).toEqual({ date: '2025-06-19', counted: true, reason: null });
  });

  test('7. when a calendar count ends on a Saturday, then the due date moves to Monday', async () => {
    // Intimated Mon 2 Jun 2025; day 1 Tue 3; day 5 Sat 7 Jun: no court business, so
    // art. 224 §1 moves it to the next business day, Mon 9 Jun 2025.
    const d = await compute({ start: { from: '2025-06-02' }, days: 5, counting: 'calendar' });
    expect(lines(d.trail)).toEqual([
      '2025-06-02 start day (CPC art. 224)',
      '2025-06-03 +',
      '2025-06-04 +',
      '2025-06-05 +',
      '2025-06-06 +',
      '2025-06-07 moved: last day not a business day',
      '2025-06-08 weekend',
      '2025-06-09 +',
    ]);
  });

  test('8. when made available before Easter, then publication waits for the first business day (art. 224 §2)', async () => {
    // Made available Thu 17 Apr 2025; Fri 18 Good Friday, Sat 19, Sun 20, Mon 21
    // Tiradentes: published Tue 22 Apr. Day 1 Wed 23 (1), Thu 24 (2), Fri 25 (3),
    // Mon 28 (4), Tue 29 Apr 2025 (5).
    const d = await compute({ start: { made_available: '2025-04-17' }, days: 5 });
    expect(d).toMatchObject({ publication_date: '2025-04-22', start_date: '2025-04-23', due_date: '2025-04-29' });
    expect(d.trail.slice(0, 7).map((t) => t.reason)).toEqual([
      'start day (CPC art. 224)',
      'holiday: Sexta-Feira Santa',
      'weekend',
      'weekend',
      'holiday: Dia de Tiradentes',
      'start day (CPC art. 224)',
      null,
    ]);
  });

  test('9. when the court is federal, then Holy Week closes from Wednesday (Lei 5.010/1966 art. 62 II)', async () => {
    // Published Mon 14 Apr 2025. Federal: day 1 Tue 15 (1); Wed 16 and Thu 17 Holy
    // Week, Fri 18 Good Friday, weekend, Mon 21 Tiradentes; Tue 22 (2), 23 (3),
    // 24 (4), Fri 25 Apr (5). A state court counts Wed 16 (2) and Thu 17 (3), then
    // 22 (4) and Wed 23 Apr (5).
    const federal = await compute({ start: { published: '2025-04-14' }, days: 5, jurisdiction: { branch: 'federal' } });
    expect(federal.due_date).toBe('2025-04-25');
    expect(federal.trail.find((t) => t.date === '2025-04-16')?.reason).toBe('holiday: Quarta-feira Santa');
    const state = await compute({ start: { published: '2025-04-14' }, days: 5 });
    expect(state.due_date).toBe('2025-04-23');
  });

  test('10. when the team court is in São Paulo, then 9 July (state holiday) does not count', async () => {
    // Published Tue 8 Jul 2025; Wed 9 Jul Revolução Constitucionalista (SP, Lei
    // estadual 9.497/1997); day 1 Thu 10 (1), Fri 11 (2), Mon 14 Jul 2025 (3). In
    // another state Wed 9 is day 1 and Fri 11 day 3.
    const sp = withCalendar({ jurisdiction: { uf: 'SP', branch: 'state' }, closures: [] });
    const d = await compute({ start: { published: '2025-07-08' }, days: 3 }, sp);
    expect(d).toMatchObject({ start_date: '2025-07-10', due_date: '2025-07-14' });
    expect(d.trail[1]).toEqual({ date: '2025-07-09', counted: false, reason: 'holiday: Revolução Constitucionalista' });
    expect((await compute({ start: { published: '2025-07-08' }, days: 3 })).due_date).toBe('2025-07-11');
    // A rule naming only the branch keeps the team's UF; naming uf null drops it.
    expect(
      (await compute({ start: { published: '2025-07-08' }, days: 3, jurisdiction: { branch: 'federal' } }, sp))
        .due_date,
    ).toBe('2025-07-14');
    expect(
      (await compute({ start: { published: '2025-07-08' }, days: 3, jurisdiction: { uf: null } }, sp)).due_date,
    ).toBe('2025-07-11');
  });

  test('11. when a labour appeal (CLT art. 895, 8 days) spans Carnaval 2026, then 16-17 Feb are skipped', async () => {
    // Published Thu 12 Feb 2026; day 1 Fri 13 (1); weekend; Carnaval Mon 16, Tue 17;
    // Wed 18 (2), 19 (3), Fri 20 (4), Mon 23 (5), 24 (6), 25 (7), Thu 26 Feb 2026 (8).
    const d = await compute({
      start: { published: '2026-02-12' },
      days: 8,
      jurisdiction: { uf: null, branch: 'labour' },
    });
    expect(d).toMatchObject({ start_date: '2026-02-13', due_date: '2026-02-26' });
  });

  test('12. when published inside the recess, then counting starts on 21 January', async () => {
    // Published Thu 8 Jan 2026, inside the art. 220 suspension: day 1 is the first
    // business day after it outside the recess, Wed 21 Jan (1), 22 (2), 23 (3),
    // 26-30 Jan (4-8), 2-6 Feb (9-13), Mon 9 (14), Tue 10 Feb 2026 (15).
    const d = await compute({ start: { published: '2026-01-08' }, days: 15 });
    expect(d).toMatchObject({ start_date: '2026-01-21', due_date: '2026-02-10' });
  });

  test('13. when made available on 19 Dec in a federal court, then publication waits for 7 Jan (art. 62 I) and counting for 21 Jan', async () => {
    // Made available Fri 19 Dec 2025; federal holidays 20 Dec to 6 Jan (Lei 5.010/1966
    // art. 62 I): published Wed 7 Jan 2026 (art. 224 §2). Art. 220: counting starts
    // Wed 21 Jan (1), 22 (2), 23 (3), Mon 26 (4), Tue 27 Jan 2026 (5).
    const d = await compute({
      start: { made_available: '2025-12-19' },
      days: 5,
      jurisdiction: { uf: null, branch: 'federal' },
    });
    expect(d).toMatchObject({ publication_date: '2026-01-07', start_date: '2026-01-21', due_date: '2026-01-27' });
    expect(d.trail.find((t) => t.date === '2025-12-22')?.reason).toBe(
      'holiday: recesso da Justiça Federal (Lei 5.010/1966 art. 62 I)',
    );
    expect(d.trail.find((t) => t.date === '2026-01-08')?.reason).toBe('recess (CPC art. 220)');
  });
});

describe('edges of the counting', () => {
  test('when a calendar count is one day, then day 1 is the due date', async () => {
    // Intimated Mon 2 Jun 2025: day 1 Tue 3 Jun 2025.
    const d = await compute({ start: { from: '2025-06-02' }, days: 1, counting: 'calendar' });
    expect(d).toMatchObject({ start_date: '2025-06-03', due_date: '2025-06-03' });
  });

  test('when a calendar count ends inside the recess on a day of court business, then it is not moved (art. 220 suspends business counting only)', async () => {
    // From Fri 12 Dec 2025: Sat 13 and Sun 14 have no court business, so day 1 is Mon
    // 15 Dec (CPP art. 798 §3); day 10 is 9 days later, Wed 24 Dec 2025, a weekday
    // that is no holiday.
    const d = await compute({ start: { from: '2025-12-12' }, days: 10, counting: 'calendar' });
    expect(d).toMatchObject({ start_date: '2025-12-15', due_date: '2025-12-24' });
  });

  test('when 365 business days are doubled, then 730 are counted', async () => {
    const d = await compute({ start: { published: '2025-01-02' }, days: 365, double: true });
    expect(d.days).toBe(730);
  });
});

describe('POST /v1/deadlines/compute refuses', () => {
  const refuse = async (body: unknown, message: string) =>
    expectInvalid(
      await sut.call(team, { method: 'POST', url: '/v1/deadlines/compute', payload: body as never }),
      message,
    );

  test('when start names none or two of its dates, then 400', async () => {
    await refuse({ start: {}, days: 5 }, 'start must have exactly one of made_available, published or from');
    await refuse(
      { start: { published: '2025-01-02', from: '2025-01-02' }, days: 5 },
      'start must have exactly one of made_available, published or from',
    );
  });

  test('when a field is missing, malformed or out of range, then 400 with its message', async () => {
    await refuse({ days: 5 }, 'start is required');
    await refuse({ start: { published: '2025-02-30' }, days: 5 }, 'start.published must be a date (YYYY-MM-DD)');
    await refuse({ start: { published: '1989-12-29' }, days: 5 }, 'start.published must be from 1990 to 2100');
    await refuse(
      { start: { made_available: '2101-01-03' }, days: 5 },
      'start.made_available must be from 1990 to 2100',
    );
    await refuse({ start: { published: '2025-02-03' }, days: 0 }, 'days must be an integer from 1 to 365');
    await refuse({ start: { published: '2025-02-03' }, days: 366 }, 'days must be an integer from 1 to 365');
    await refuse({ start: { published: '2025-02-03' }, days: 2.5 }, 'days must be an integer from 1 to 365');
    await refuse({ start: { published: '2025-02-03' }, days: 5, counting: 'weeks' }, 'Invalid counting');
    await refuse({ start: { published: '2025-02-03' }, days: 5, double: 'yes' }, 'double must be true or false');
    await refuse({ start: { published: '2025-02-03' }, days: 5, jurisdiction: { uf: 'XX' } }, 'Invalid uf');
    await refuse({ start: { published: '2025-02-03' }, days: 5, court: 'TJSP' }, 'Unknown field: court');
  });
});
