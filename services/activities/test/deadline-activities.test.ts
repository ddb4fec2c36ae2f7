// Deadline activities whose due date a rule computes, in process on a
// real store; the relay stub keeps the events each write hands it.
import type { DomainEvent } from '@lpm/shared/events';
import type { Identity } from '@lpm/shared/identity';
import { expectInvalid } from '@lpm/test-kit/error-answers';
import { TeamSyncs } from '@lpm/shared/jobs/team-syncs';
import { askUntilDone } from '@lpm/test-kit/team-sync';
import { quietLogger, waitFor } from '@lpm/test-kit/wait';
import { identity } from '@lpm/test-kit/teams';
import { serviceForSuite } from '@lpm/test-kit/service-under-test';
import { startActivities, type ActivitiesUnderTest } from './helper.ts';

let sut: ActivitiesUnderTest;
const kicked: DomainEvent[] = [];

serviceForSuite(
  () =>
    startActivities({
      relay: { kick: (_c: string, _id: string, events: DomainEvent[]) => void kicked.push(...events) },
    }),
  (started) => (sut = started),
);

const call = (who: Identity, method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) =>
  sut.call(who, { method, url, payload: payload as never });

// Published Thu 27 Feb 2025, 5 business days: Fri 28 Feb (1), Carnaval 3-4 Mar,
// Wed 5 (2), Thu 6 (3), Fri 7 (4), Mon 10 Mar 2025 (5) (worked table, case 2).
const RULE = { start: { published: '2025-02-27' }, days: 5 };

/** A deadline `title` of `who`'s team, created from RULE. */
const ruledDeadline = async (who: Identity, title: string) =>
  (await call(who, 'POST', '/v1/activities', { type: 'deadline', title, deadline_rule: RULE })).json().data;

describe('POST /v1/activities with deadline_rule', () => {
  test('when a deadline is created from a rule, then it has the calculator date, and its detail shows the rule and trail', async () => {
    const who = identity();
    const res = await call(who, 'POST', '/v1/activities', {
      type: 'deadline',
      title: 'Contestação',
      deadline_rule: RULE,
    });
    expect(res.statusCode).toBe(201);
    const created = res.json().data;
    expect(created.due_date).toBe('2025-03-10');
    const computed = (await call(who, 'POST', '/v1/deadlines/compute', RULE)).json().data;
    expect(created.deadline).toEqual(computed);
    const detail = (await call(who, 'GET', `/v1/activities/${created.id}`)).json().data;
    expect(detail).toMatchObject({
      due_date: '2025-03-10',
      deadline_rule: RULE,
      deadline: { start_date: '2025-02-28', due_date: '2025-03-10', days: 5 },
    });
    expect(detail.deadline.trail[4]).toEqual({
      date: '2025-03-03',
      counted: false,
      reason: 'holiday: Carnaval (segunda-feira)',
    });
    const stored = await sut.db
      .collection<{ _id: string; deadline: { trail: unknown } }>('activities')
      .findOne({ _id: created.id });
    expect(typeof stored?.deadline.trail).toBe('string');
  });

  test('when the rule due date has passed, then the activity is overdue as any other', async () => {
    const who = identity();
    const created = await ruledDeadline(who, 'Apelação');
    const overdue = (await call(who, 'GET', '/v1/activities/overdue')).json().data;
    expect(overdue.map((a: { id: string }) => a.id)).toEqual([created.id]);
  });

  test('when the rule due date is ahead, then due_soon and overdue are armed from it, and re-armed when a closure moves it', async () => {
    const who = identity();
    // Easter 2030 is 21 April, so Carnaval is Mon 4 and Tue 5 Mar 2030. Published Fri
    // 1 Mar 2030, 1 business day: Sat 2, Sun 3, Carnaval 4-5, day 1 Wed 6 Mar 2030.
    // Due moment 23:59 in São Paulo (UTC-3): 2030-03-07T02:59Z; due_soon 24 h before.
    const created = (
      await call(who, 'POST', '/v1/activities', {
        type: 'deadline',
        title: 'Manifestação',
        deadline_rule: { start: { published: '2030-03-01' }, days: 1 },
      })
    ).json().data;
    expect(created.due_date).toBe('2030-03-06');
    const stored = () => sut.db.collection<{ _id: string }>('activities').findOne({ _id: created.id });
    expect(await stored()).toMatchObject({
      due_soon_at: new Date('2030-03-06T02:59:00Z'),
      overdue_at: new Date('2030-03-07T02:59:00Z'),
    });
    // A closure on Wed 6 Mar: day 1 is Thu 7 Mar 2030; the signals move a day.
    const calendar = {
      jurisdiction: { uf: null, branch: 'state' },
      closures: [{ date: '2030-03-06', name: 'Expediente suspenso' }],
    };
    const changedAt = new Date().toISOString();
    await askUntilDone(() =>
      call(who, 'POST', '/internal/court-calendar', { court_calendar: calendar, changed_at: changedAt }),
    );
    expect(await stored()).toMatchObject({
      due_date: '2030-03-07',
      due_soon_at: new Date('2030-03-07T02:59:00Z'),
      overdue_at: new Date('2030-03-08T02:59:00Z'),
    });
  });

  test('when a due_date comes with the rule, or the type is not deadline, or it recurs, then 400', async () => {
    const who = identity();
    expectInvalid(
      await call(who, 'POST', '/v1/activities', {
        type: 'deadline',
        title: 'x',
        due_date: '2025-03-10',
        deadline_rule: RULE,
      }),
      'Send either due_date or deadline_rule, not both',
    );
    expectInvalid(
      await call(who, 'POST', '/v1/activities', { type: 'deadline', title: 'x', due_date: null, deadline_rule: RULE }),
      'Send either due_date or deadline_rule, not both',
    );
    expectInvalid(
      await call(who, 'POST', '/v1/activities', { type: 'task', title: 'x', deadline_rule: RULE }),
      'deadline_rule is only for type deadline',
    );
    expectInvalid(
      await call(who, 'POST', '/v1/activities', {
        type: 'deadline',
        title: 'x',
        deadline_rule: RULE,
        recurrence: { frequency: 'weekly' },
      }),
      'A deadline from a rule cannot recur',
    );
    expectInvalid(
      await call(who, 'POST', '/v1/activities', { type: 'deadline', title: 'x', deadline_rule: { days: 5 } }),
      'deadline_rule.start is required',
    );
  });

  test('when a PUT sends another rule, then the due date is computed again and the answer shows it', async () => {
    const who = identity();
    const created = await ruledDeadline(who, 'Recurso');
    // Published Thu 27 Feb 2025, 15 business days: Fri 28 Feb (1), Carnaval 3-4 Mar,
    // 5-7 Mar (2-4), 10-14 (5-9), 17-21 (10-14), Mon 24 Mar 2025 (15).
    const rule = { start: { published: '2025-02-27' }, days: 15 };
    const res = await call(who, 'PUT', `/v1/activities/${created.id}`, { deadline_rule: rule });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({
      id: created.id,
      due_date: '2025-03-24',
      deadline_rule: rule,
      deadline: { due_date: '2025-03-24', days: 15 },
    });
    expectInvalid(
      await call(who, 'PUT', `/v1/activities/${created.id}`, { deadline_rule: rule, due_date: '2025-03-25' }),
      'Send either due_date or deadline_rule, not both',
    );
    expectInvalid(
      await call(who, 'PUT', `/v1/activities/${created.id}`, { type: 'task' }),
      'deadline_rule is only for type deadline',
    );
  });

  test('when a due date is set by hand on a rule-based deadline, then the rule is dropped', async () => {
    const who = identity();
    const created = await ruledDeadline(who, 'Réplica');
    const res = await call(who, 'PUT', `/v1/activities/${created.id}`, { due_date: '2025-03-12' });
    expect(res.statusCode).toBe(200);
    const detail = (await call(who, 'GET', `/v1/activities/${created.id}`)).json().data;
    expect(detail).toMatchObject({ due_date: '2025-03-12', deadline_rule: null, deadline: null });
  });
});

describe('a court calendar change (POST /internal/court-calendar, from the gateway)', () => {
  test('when a closure is added inside the count, then the due date moves a day and activity.updated carries the previous date', async () => {
    const who = identity();
    const ruled = await ruledDeadline(who, 'Embargos');
    const byHand = (
      await call(who, 'POST', '/v1/activities', { type: 'deadline', title: 'Manual', due_date: '2025-03-10' })
    ).json().data;
    const done = await ruledDeadline(who, 'Feito');
    expect((await call(who, 'PUT', `/v1/activities/${done.id}/complete`, {})).statusCode).toBe(200);
    kicked.length = 0;

    // Closure on Thu 6 Mar 2025: Fri 28 Feb (1), Wed 5 (2), Fri 7 (3), Mon 10 (4), Tue 11 Mar 2025 (5).
    const calendar = {
      jurisdiction: { uf: null, branch: 'state' },
      closures: [{ date: '2025-03-06', name: 'Fórum sem energia' }],
    };
    const changedAt = new Date().toISOString();
    const tell = (at: string, court = calendar) =>
      call(
        { ...who, settings: { ...who.settings, court_calendar: court as Identity['settings']['court_calendar'] } },
        'POST',
        '/internal/court-calendar',
        { court_calendar: court, changed_at: at },
      );
    const first = await tell(changedAt);
    expect([first.statusCode, first.json()]).toEqual([202, { success: true, data: { done: false, changed: 0 } }]);
    expect(await askUntilDone(() => tell(changedAt))).toMatchObject({ done: true, changed: 1 });

    expect((await call(who, 'GET', `/v1/activities/${ruled.id}`)).json().data).toMatchObject({
      due_date: '2025-03-11',
      deadline: { due_date: '2025-03-11' },
    });
    expect((await call(who, 'GET', `/v1/activities/${byHand.id}`)).json().data.due_date).toBe('2025-03-10');
    expect((await call(who, 'GET', `/v1/activities/${done.id}`)).json().data.due_date).toBe('2025-03-10');
    expect(kicked.map((e) => [e.type, e.data.object.id, e.data.object.due_date, e.data.previous_attributes])).toEqual([
      ['activity.updated', ruled.id, '2025-03-11', { due_date: '2025-03-10' }],
    ]);

    // Asked again (the gateway's retry): the run is done, nothing runs again, nothing is emitted.
    kicked.length = 0;
    const again = await tell(changedAt);
    expect([again.statusCode, again.json().data]).toEqual([200, { done: true, changed: 1 }]);
    // The same calendar from a later change (another setting changed): done at once, nothing rewritten.
    const later = await tell(new Date(Date.now() + 1000).toISOString());
    expect([later.statusCode, later.json().data]).toEqual([200, { done: true, changed: 0 }]);
    expect(kicked).toEqual([]);

    // An older calendar arriving late is not applied over a newer one.
    const stale = await tell('2020-01-01T00:00:00.000Z', { jurisdiction: { uf: null, branch: 'state' }, closures: [] });
    expect(stale.statusCode).toBe(200);
    expect((await call(who, 'GET', `/v1/activities/${ruled.id}`)).json().data.due_date).toBe('2025-03-11');
  });
});

describe('a court calendar change over many deadlines (shared/src/jobs/team-syncs.ts)', () => {
  test('when a team has 300 open rule-based deadlines, then the run moves every one, page by page, each marked in its own write, resuming after a stop with the rest, one activity.updated each', async () => {
    const events: DomainEvent[] = [];
    const paged = await startActivities({
      relay: { kick: (_c: string, _id: string, e: DomainEvent[]) => void events.push(...e) },
      syncs: { pageSize: 20, windowSize: 130 },
    });
    try {
      const who = identity();
      const ids: string[] = [];
      for (let i = 0; i < 300; i += 10) {
        const made = await Promise.all(
          Array.from({ length: 10 }, (_, j) =>
            paged.call(who, {
              method: 'POST',
              url: '/v1/activities',
              payload: { type: 'deadline', title: `Prazo ${i + j}`, deadline_rule: RULE },
            }),
          ),
        );
        for (const res of made) ids.push(res.json().data.id);
      }
      events.length = 0;
      // Closure on Thu 6 Mar 2025: every one moves from 10 to 11 Mar 2025.
      const calendar = {
        jurisdiction: { uf: null, branch: 'state' },
        closures: [{ date: '2025-03-06', name: 'Fórum sem energia' }],
      };
      const moved = {
        ...who,
        settings: { ...who.settings, court_calendar: calendar as Identity['settings']['court_calendar'] },
      };
      const changedAt = new Date().toISOString();
      const tell = () =>
        paged.call(moved, {
          method: 'POST',
          url: '/internal/court-calendar',
          payload: { court_calendar: calendar, changed_at: changedAt },
        });
      expect((await tell()).statusCode).toBe(202);

      // The process stops after a few pages: the records it moved carry the run's mark, and the next run does the rest.
      const run = () =>
        paged.db
          .collection<{ _id: string; cursor: string | null; changed: number; pending: number }>('team_syncs')
          .findOne({ _id: `court-calendar:${who.teamId}` });
      await waitFor('a few pages done', async () => ((await run())?.changed ?? 0) >= 40);
      await paged.syncs.stop();
      const stopped = (await run())!;
      expect(stopped.pending).toBe(1);
      const stored = () =>
        paged.db
          .collection<{ _id: string; due_date: string; sync_court_calendar?: string }>('activities')
          .find({ team_id: who.teamId })
          .toArray();
      const dueOf = async () => new Map((await stored()).map((a) => [a._id, a.due_date]));
      const halfway = await stored();
      const sorted = [...ids].sort();
      const movedIds = halfway.filter((a) => a.due_date === '2025-03-11').map((a) => a._id);
      expect(movedIds.sort()).toEqual(
        halfway
          .filter((a) => a.sync_court_calendar === changedAt)
          .map((a) => a._id)
          .sort(),
      );
      expect(movedIds).toHaveLength(stopped.changed);
      expect(stopped.changed).toBeLessThan(300);

      const resumed = new TeamSyncs({
        db: paged.db,
        logger: quietLogger,
        work: paged.activities.syncWork(),
        pageSize: 20,
        windowSize: 130,
        passMs: 50,
      });
      await resumed.start();
      try {
        expect(await askUntilDone(tell, 60_000)).toMatchObject({ done: true, changed: 300 });
      } finally {
        await resumed.stop();
      }
      const after = await dueOf();
      expect(ids.filter((id) => after.get(id) !== '2025-03-11')).toEqual([]);
      const updated = events
        .filter((e) => e.type === 'activity.updated')
        .map((e) => String((e.data as { object: { id?: unknown } }).object.id));
      expect(updated.sort()).toEqual(sorted);
    } finally {
      await paged.close();
    }
  }, 120_000);
});
