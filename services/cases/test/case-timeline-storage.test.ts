// A case keeps its timeline packed into one string; cases stored with their entries
// as documents are read, and extended, as they are.
import { identity } from '@lpm/test-kit/teams';
import { serviceForSuite } from '@lpm/test-kit/service-under-test';
import { TIMELINE_KEPT, timelineEntries, withEntries } from '../src/domain/case-timeline.ts';
import { startCases, type CasesUnderTest } from './helper.ts';

let sut: CasesUnderTest;

serviceForSuite(startCases, (started) => (sut = started));

const stored = (caseId: string) =>
  sut.db.collection<{ _id: string; timeline: unknown }>('cases').findOne({ _id: caseId });

test('when a case is created and updated, then its timeline is stored as one string and read back newest first', async () => {
  const who = identity();
  const caseId = (
    await sut.call(who, { method: 'POST', url: '/v1/cases', payload: { title: 'Processo embalado' } })
  ).json().data.id;
  await sut.call(who, { method: 'PUT', url: `/v1/cases/${caseId}`, payload: { title: 'Processo embalado revisto' } });
  expect(typeof (await stored(caseId))?.timeline).toBe('string');
  const timeline = (await sut.call(who, { method: 'GET', url: `/v1/cases/${caseId}/timeline` })).json().data;
  expect(timeline.map((e: { type: string }) => e.type)).toEqual(['case_updated', 'case_created']);
});

test('when a case stored with its timeline as documents is updated, then the timeline shows its old entries and the new one, stored packed', async () => {
  const who = identity();
  const caseId = (
    await sut.call(who, { method: 'POST', url: '/v1/cases', payload: { title: 'Processo antigo' } })
  ).json().data.id;
  const old = [
    {
      id: 'evt_old',
      type: 'case_created',
      description: 'Case created',
      user_id: who.userId,
      created_at: new Date('2025-01-02T03:04:05.000Z'),
    },
  ];
  await sut.db.collection<{ _id: string }>('cases').updateOne({ _id: caseId }, { $set: { timeline: old } });
  await sut.call(who, { method: 'PUT', url: `/v1/cases/${caseId}`, payload: { priority: 'alta' } });
  const timeline = (await sut.call(who, { method: 'GET', url: `/v1/cases/${caseId}/timeline` })).json().data;
  expect(
    timeline.map((e: { id: string; type: string; created_at: string }) => [
      e.type,
      e.id === 'evt_old' ? e.created_at : 'new',
    ]),
  ).toEqual([
    ['case_updated', 'new'],
    ['case_created', '2025-01-02T03:04:05.000Z'],
  ]);
  expect(typeof (await stored(caseId))?.timeline).toBe('string');
});

test('when entries pass the number kept, then the oldest go and each entry keeps its instant', () => {
  const entry = (i: number) => ({
    id: `evt_${i}`,
    type: 'case_updated' as const,
    description: `Update ${i}`,
    user_id: null,
    created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
  });
  const packed = withEntries(null, ...Array.from({ length: TIMELINE_KEPT + 5 }, (_, i) => entry(i)));
  const entries = timelineEntries(withEntries(packed, entry(500)));
  expect(entries).toHaveLength(TIMELINE_KEPT);
  expect(entries[0]).toEqual(entry(6));
  expect(entries.at(-1)).toEqual(entry(500));
});
