// A case's activities_count takes each activity event once, even when the event
// comes again after it was applied: the consumer's dedupe claim and the count are
// two writes, and a consumer killed between them (its claim then goes stale) hands
// the event to a copy that runs it again. Found by the fault drill (issue 25).
import { identity, startCases, type CasesUnderTest } from './helper.ts';

let sut: CasesUnderTest;

beforeAll(async () => {
  sut = await startCases();
});

afterAll(async () => {
  await sut.close();
});

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
