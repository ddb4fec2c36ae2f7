// Recurring activities and the internal endpoints other services ask, in process
// (the other endpoints: activities-api.test.ts).
import { expectBusy, expectRefused } from '@lpm/test-kit/error-answers';
import { holdRecordLock, releaseRecordLocks } from '@lpm/test-kit/record-locks';
import { identity } from '@lpm/test-kit/teams';
import { activitiesSuite, call, create, ISO_MS, other, sut, ZONE } from './activities-suite.ts';

activitiesSuite();

describe('recurrence', () => {
  /** A task `title` due on `due_date`, recurring as `recurrence`. */
  const taskSeries = (title: string, due_date: string, recurrence: Record<string, unknown>) =>
    create({ type: 'task', title, due_date, recurrence });
  const seriesOf = async (title: string) =>
    (await call('GET', '/v1/activities?limit=100')).json().data.filter((a: { title: string }) => a.title === title);

  test('when a daily series with count 3 is completed again and again, then exactly three occurrences exist', async () => {
    let a = await taskSeries('Diária', '2027-01-10', { frequency: 'daily', count: 3 });
    for (let i = 0; i < 3; i++) {
      await call('PUT', `/v1/activities/${a.id}/complete`, {});
      const open = (await seriesOf('Diária')).filter((x: { status: string }) => x.status === 'pending');
      a = open[0];
    }
    const all = await seriesOf('Diária');
    expect(all.map((x: { due_date: string; status: string }) => [x.due_date, x.status])).toEqual([
      ['2027-01-10', 'completed'],
      ['2027-01-11', 'completed'],
      ['2027-01-12', 'completed'],
    ]);
  });

  test('when a monthly series starts on 2027-01-31, then the next fall on 2027-02-28 and 2027-03-31, pending with the same fields', async () => {
    const first = await create({
      type: 'deadline',
      title: 'Mensal',
      priority: 'alta',
      due_date: '2027-01-31',
      due_time: '09:00',
      recurrence: { frequency: 'monthly' },
    });
    await call('PUT', `/v1/activities/${first.id}/complete`, {});
    const second = (await seriesOf('Mensal')).find((x: { status: string }) => x.status === 'pending');
    expect(second).toMatchObject({ due_date: '2027-02-28', status: 'pending', priority: 'alta', type: 'deadline' });
    expect((await call('GET', `/v1/activities/${second.id}`)).json().data).toMatchObject({
      due_time: '09:00',
      recurrence: { frequency: 'monthly', interval: 1 },
    });
    await call('PUT', `/v1/activities/${second.id}`, { status: 'completed' });
    const third = (await seriesOf('Mensal')).find((x: { status: string }) => x.status === 'pending');
    expect(third.due_date).toBe('2027-03-31');
  });

  /** Another writer takes the activity's lock slots, well past a completion's lock wait, until `release`. */
  const holdLock = async (id: string) => {
    await holdRecordLock(sut.db, 'activities', id);
    return { release: () => releaseRecordLocks(sut.db) };
  };
  const dueAndStatus = async (title: string) =>
    (await seriesOf(title)).map((x: { due_date: string; status: string }) => [x.due_date, x.status]);

  test('when a completion fails with 503 (the record busy) and is never retried, then the series does not advance; a retry advances it once', async () => {
    const a = await taskSeries('Falha no meio', '2027-02-01', { frequency: 'daily', count: 5 });
    const lock = await holdLock(a.id);
    try {
      expectBusy(await call('PUT', `/v1/activities/${a.id}/complete`, {}));
      expectBusy(await call('PUT', `/v1/activities/${a.id}`, { status: 'completed' }));
    } finally {
      await lock.release();
    }
    expect(await dueAndStatus('Falha no meio')).toEqual([['2027-02-01', 'pending']]);
    expect((await call('PUT', `/v1/activities/${a.id}/complete`, {})).statusCode).toBe(200);
    expectRefused(await call('PUT', `/v1/activities/${a.id}/complete`, {}), 'Activity already completed');
    expect(await dueAndStatus('Falha no meio')).toEqual([
      ['2027-02-01', 'completed'],
      ['2027-02-02', 'pending'],
    ]);
  }, 30_000);

  test('when a completion loses to a cancel made while it waited for the record, then 422 and the series does not advance', async () => {
    const a = await taskSeries('Cancelada antes', '2027-03-01', { frequency: 'weekly' });
    const b = await taskSeries('Cancelada antes por PUT', '2027-03-01', { frequency: 'weekly' });
    for (const [id, complete, refusal] of [
      [a.id, () => call('PUT', `/v1/activities/${a.id}/complete`, {}), 'Cannot complete cancelled activity'],
      [b.id, () => call('PUT', `/v1/activities/${b.id}`, { status: 'completed' }), 'Invalid status transition'],
    ] as const) {
      const lock = await holdLock(id);
      const completing = complete();
      // The writer holding the lock cancels the activity, then lets the completion in.
      await new Promise((r) => setTimeout(r, 1000));
      await sut.db
        .collection('activities')
        .updateOne({ _id: id as never }, { $set: { status: 'cancelled', open: 0 }, $inc: { version: 1 } });
      await lock.release();
      expectRefused(await completing, refusal);
    }
    expect(await dueAndStatus('Cancelada antes')).toEqual([['2027-03-01', 'cancelled']]);
    expect(await dueAndStatus('Cancelada antes por PUT')).toEqual([['2027-03-01', 'cancelled']]);
  }, 30_000);

  test('when the process dies between the completion and its next occurrence, then the series repair writes that occurrence, once however often it runs', async () => {
    const a = await taskSeries('Reparo', '2027-04-01', { frequency: 'monthly' });
    expect((await call('PUT', `/v1/activities/${a.id}/complete`, {})).statusCode).toBe(200);
    const activities = sut.db.collection<Record<string, unknown> & { _id: string }>('activities');
    const made = await activities.findOne(
      { series_id: a.id, occurrence: 2 },
      { projection: { outbox: 0, outbox_pending: 0 } },
    );
    expect(made).toMatchObject({ due_date: '2027-05-01', status: 'pending', occurrence_key: `${a.id}:2` });
    // The state such a death leaves: the completion written with the occurrence it owes, the occurrence not.
    await activities.deleteOne({ _id: made!._id });
    await activities.updateOne({ _id: a.id }, { $set: { next_pending: 1, next_occurrence: made } });
    expect(await dueAndStatus('Reparo')).toEqual([['2027-04-01', 'completed']]);

    await Promise.all([sut.activities.settleOwedOccurrences(), sut.activities.settleOwedOccurrences()]);
    await sut.activities.settleOwedOccurrences();
    expect(await dueAndStatus('Reparo')).toEqual([
      ['2027-04-01', 'completed'],
      ['2027-05-01', 'pending'],
    ]);
    expect((await activities.findOne({ series_id: a.id, occurrence: 2 }))?._id).toBe(made!._id);
    expect(await activities.findOne({ _id: a.id })).toMatchObject({ next_pending: 0, next_occurrence: null });
    // A second occurrence 2, whatever its id, is refused by the store.
    await expect(activities.insertOne({ ...made!, _id: 'act_01jd3k00000000000000000000' })).rejects.toMatchObject({
      code: 11000,
    });
  });

  test('when until is reached, then the series ends', async () => {
    const a = await taskSeries('Semanal', '2027-01-01', { frequency: 'weekly', until: '2027-01-10' });
    await call('PUT', `/v1/activities/${a.id}/complete`, {});
    const b = (await seriesOf('Semanal')).find((x: { status: string }) => x.status === 'pending');
    expect(b.due_date).toBe('2027-01-08');
    await call('PUT', `/v1/activities/${b.id}/complete`, {});
    expect((await seriesOf('Semanal')).map((x: { status: string }) => x.status)).toEqual(['completed', 'completed']);
  });
});

describe('internal endpoints', () => {
  test("when cases ask for a case's activities and counts, then a page with the case item shape and the counts come back", async () => {
    const team = identity(ZONE);
    const k = sut.world.addCase(team.teamId, 'Contado');
    const d = sut.world.addDeal(team.teamId);
    const a = await create({ type: 'task', title: 'Um', case_id: k.id, deal_id: d, due_date: '2027-01-01' }, team);
    await create({ type: 'task', title: 'Dois', case_id: k.id }, team);
    await call('PUT', `/v1/activities/${a.id}/complete`, {}, team);
    const page = (await call('GET', `/internal/cases/${k.id}/activities?page=1&limit=1`, undefined, team)).json();
    expect(page.pagination).toEqual({ page: 1, limit: 1, total: 2, pages: 2 });
    expect(page.data).toEqual([
      {
        id: a.id,
        type: 'task',
        title: 'Um',
        status: 'completed',
        priority: 'media',
        due_date: '2027-01-01',
        completed_at: expect.stringMatching(ISO_MS),
        created_at: expect.stringMatching(ISO_MS),
      },
    ]);
    expect((await call('GET', `/internal/cases/${k.id}/activities/count`, undefined, team)).json().data).toEqual({
      count: 2,
      open: 1,
      overdue: 0,
    });
    expect((await call('GET', `/internal/deals/${d}/activities/count`, undefined, team)).json().data).toEqual({
      count: 1,
      open: 0,
      overdue: 0,
    });
    await create({ type: 'call', title: 'Atrasada', deal_id: d, due_date: '2020-01-01' }, team);
    await create({ type: 'call', title: 'Em dia', deal_id: d, due_date: '2099-01-01' }, team);
    expect((await call('GET', `/internal/deals/${d}/activities/count`, undefined, team)).json().data).toEqual({
      count: 3,
      open: 2,
      overdue: 1,
    });
    expect((await call('GET', `/internal/deals/${d}/activities/count`, undefined, other)).json().data).toEqual({
      count: 0,
      open: 0,
      overdue: 0,
    });
    expect(
      (await call('POST', '/internal/activity-counts', { kind: 'deal', ids: [d, 'deal_x'] }, team)).json().data,
    ).toEqual({ [d]: 3, deal_x: 0 });
  });
});
