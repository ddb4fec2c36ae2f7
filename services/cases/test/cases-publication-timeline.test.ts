// Court publications on a case's timeline, from the publications service's events.
import { newEvent } from '@lpm/shared/events';
import { identity } from '@lpm/test-kit/teams';
import { serviceForSuite } from '@lpm/test-kit/service-under-test';
import { publicationNewsOf } from '../src/consumers/publication-events.ts';
import { recordPublication } from '../src/domain/publication-entries.ts';
import { startCases, type CasesUnderTest } from './helper.ts';

let sut: CasesUnderTest;

serviceForSuite(startCases, (started) => (sut = started));

const publication = (caseId: string | null) => ({
  id: 'pub_x',
  case_id: caseId,
  document_type: 'Despacho',
  court: 'TJSP',
  made_available_date: '2026-11-26',
});

test('when a publication arrives with its case, or is matched to it later, then the timeline shows it once; one without a case or unchanged adds nothing', async () => {
  const who = identity();
  const created = await sut.call(who, { method: 'POST', url: '/v1/cases', payload: { title: 'Processo publicado' } });
  const caseId = created.json().data.id as string;
  const received = newEvent('publication.received', who.teamId, publication(caseId));
  const matched = newEvent('publication.updated', who.teamId, publication(caseId), { case_id: null });
  const treated = newEvent('publication.updated', who.teamId, publication(caseId), { status: 'new' });
  expect(publicationNewsOf(newEvent('publication.received', who.teamId, publication(null)))).toBeNull();
  expect(publicationNewsOf(treated)).toBeNull();
  for (const event of [received, received, matched]) await recordPublication(sut.repository, publicationNewsOf(event)!);
  const timeline = (await sut.call(who, { method: 'GET', url: `/v1/cases/${caseId}/timeline` })).json().data;
  const entries = timeline.filter((e: { type: string }) => e.type === 'publication_received');
  expect(entries).toHaveLength(2);
  expect(entries[0].description).toBe('Publication: Despacho (TJSP, made available 2026-11-26)');
});
