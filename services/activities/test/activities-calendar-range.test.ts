// A recurring series cannot leave the platform's calendar (docs/limits.md):
// the completion whose next occurrence would fall after 9998-12-31 is refused with
// 422, and the activity can still be completed once the series is given an end.
import { expectRefused } from '@lpm/test-kit/error-answers';
import { serviceForSuite } from '@lpm/test-kit/service-under-test';
import { identity } from '@lpm/test-kit/teams';
import { startActivities, type ActivitiesUnderTest } from './helper.ts';

let sut: ActivitiesUnderTest;
const t = identity();

serviceForSuite(startActivities, (started) => (sut = started));

const call = (method: 'POST' | 'PUT' | 'GET', url: string, payload?: unknown) =>
  sut.call(t, { method, url, payload: payload as never });

test('when a yearly series every 1000 years reaches 9025, then completing it is 422 (not a 500), and with an until it completes and ends', async () => {
  let id = (
    await call('POST', '/v1/activities', {
      type: 'task',
      title: 'Milênios',
      due_date: '2025-01-10',
      recurrence: { frequency: 'yearly', interval: 1000 },
    })
  ).json().data.id;
  for (let year = 2025; year < 9025; year += 1000) {
    expect((await call('PUT', `/v1/activities/${id}/complete`, {})).statusCode).toBe(200);
    const next = await sut.db.collection('activities').findOne({ team_id: t.teamId, status: 'pending' });
    expect(next?.due_date).toBe(`${year + 1000}-01-10`);
    id = next!._id;
  }
  const refused = expectRefused(
    await call('PUT', `/v1/activities/${id}/complete`, {}),
    'Next occurrence would fall after 9998-12-31',
  );
  expect(refused.details).toEqual({ reason: 'occurrence_past_calendar' });
  expect((await call('GET', `/v1/activities/${id}`)).json().data.status).toBe('pending');

  expect(
    (
      await call('PUT', `/v1/activities/${id}`, {
        recurrence: { frequency: 'yearly', interval: 1000, until: '9998-12-31' },
      })
    ).statusCode,
  ).toBe(200);
  expect((await call('PUT', `/v1/activities/${id}/complete`, {})).statusCode).toBe(200);
  expect(await sut.db.collection('activities').countDocuments({ team_id: t.teamId, status: 'pending' })).toBe(0);
});
