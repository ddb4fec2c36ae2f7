// A case's activities_count takes each activity event once, even when the event
// comes again after it was applied: the consumer's dedupe claim and the count are
// two writes, and a consumer killed between them (its claim then goes stale) hands
// the event to a copy that runs it again, as the fault drill does.
import { identity } from '@lpm/test-kit/teams';
import { serviceForSuite } from '@lpm/test-kit/service-under-test';
import { startCases, type CasesUnderTest } from './helper.ts';

let sut: CasesUnderTest;

serviceForSuite(startCases, (started) => (sut = started));

test('when one activity event is applied twice, and a second event once, then activities_count and the timeline count each event once', async () => {
  const who = identity();
  const created = await sut.call(who, { method: 'POST', url: '/v1/cases', payload: { title: 'Processo contado' } });
  expect(created.statusCode).toBe(201);
  const caseId = created.json().data.id;
  const news = (eventId: string, activityId: string) => ({
    teamId: who.teamId,
    type: 'activity.created' as const,
    activity: { id: activityId, title: `Tarefa ${activityId}`, case_id: caseId },
    actorId: who.userId,
    at: new Date(),
    eventId,
  });
  await sut.cases.recordActivityEvent(news('evt_a', 'act_a'));
  await sut.cases.recordActivityEvent(news('evt_a', 'act_a'));
  await sut.cases.recordActivityEvent(news('evt_b', 'act_b'));
  const read = (await sut.call(who, { method: 'GET', url: `/v1/cases/${caseId}` })).json().data;
  expect(read.activities_count).toBe(2);
  const timeline = (await sut.call(who, { method: 'GET', url: `/v1/cases/${caseId}/timeline` })).json().data;
  expect(timeline.filter((e: { type: string }) => e.type === 'activity_added')).toHaveLength(2);
});

test('when an activity.deleted arrives before the activity.created it undoes, then activities_count still ends at the activities that exist', async () => {
  // A create sent to a retry queue (a store cut) comes back after its delete: the
  // drill found cases counting one activity too many because the early -1 was clamped.
  const who = identity();
  const created = await sut.call(who, {
    method: 'POST',
    url: '/v1/cases',
    payload: { title: 'Processo fora de ordem' },
  });
  const caseId = created.json().data.id;
  const news = (type: 'activity.created' | 'activity.deleted', eventId: string, activityId: string) => ({
    teamId: who.teamId,
    type,
    activity: { id: activityId, title: `Tarefa ${activityId}`, case_id: caseId },
    actorId: who.userId,
    at: new Date(),
    eventId,
  });
  await sut.cases.recordActivityEvent(news('activity.deleted', 'evt_del_a', 'act_a'));
  const between = (await sut.call(who, { method: 'GET', url: `/v1/cases/${caseId}` })).json().data;
  expect(between.activities_count).toBe(0);
  await sut.cases.recordActivityEvent(news('activity.created', 'evt_new_b', 'act_b'));
  await sut.cases.recordActivityEvent(news('activity.created', 'evt_new_a', 'act_a'));
  const read = (await sut.call(who, { method: 'GET', url: `/v1/cases/${caseId}` })).json().data;
  expect(read.activities_count).toBe(1);
});
