// Court publications on a case's timeline: a publication kept with its case, or
// matched to it later (by number or by hand), adds publication_received. Each event
// is applied once: its id is written with the entry, so a redelivery finds it there.
import { AppError } from '@lpm/shared/errors';
import type { CasesRepository } from '../data/cases-repository.ts';
import { COUNTED_EVENTS_KEPT } from './case-activity-counts.ts';
import { timelineEntry, withEntries } from './case-timeline.ts';

export interface PublicationNews {
  teamId: string;
  eventId: string;
  caseId: string;
  documentType: string | null;
  court: string;
  madeAvailable: string;
  at: Date;
}

export async function recordPublication(cases: CasesRepository, news: PublicationNews): Promise<void> {
  const what = news.documentType ?? 'Publicação';
  const entry = timelineEntry(
    { userId: null },
    'publication_received',
    `Publication: ${what} (${news.court}, made available ${news.madeAvailable})`,
    news.at,
  );
  try {
    await cases.update(
      news.teamId,
      news.caseId,
      async (current) => {
        const counted = current.counted_events ?? [];
        if (counted.includes(news.eventId)) return { result: undefined };
        const timeline = withEntries(current.timeline, entry);
        return {
          result: undefined,
          write: {
            set: { timeline, counted_events: [...counted, news.eventId].slice(-COUNTED_EVENTS_KEPT) },
            events: [],
          },
        };
      },
      ['timeline', 'counted_events'],
    );
  } catch (err) {
    // A case gone, or another team's, shows nothing.
    if (err instanceof AppError && err.status === 404) return;
    throw err;
  }
}
