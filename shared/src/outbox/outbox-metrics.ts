// The outbox's metrics: the relay's publish duration, and, at each scrape, the
// events still in documents' outboxes (read from the store) or waiting for the
// broker under this process's marks (marks.ts), and the age of the oldest. An
// outbox keeps an event until its confirmed publish, so a healthy one holds events
// for a moment; an old one means publishing stopped.
import type { Db } from 'mongodb';
import type { DomainEvent } from '../events.ts';
import { SCRAPE_READ_TIMEOUT_MS, scrapeRead } from '../metrics.ts';
import { latencyHistogram, scrapedGauge } from '../metric-makers.ts';
import type { EventPublisher } from './drain.ts';
import type { OutboxMarks } from './marks.ts';

/** Documents read per collection and scrape: past this the figures are a lower bound. */
const SCRAPE_DOCUMENTS = 1000;

const publishDuration = latencyHistogram(
  'outbox_publish_duration_seconds',
  "The relay's publish of one event, to the broker's confirm",
  ['outcome'],
);

interface Watched {
  db: Db;
  collections: string[];
  marks?: OutboxMarks;
}
const watched: Watched[] = [];
const readOutboxes = scrapeRead(readAll);

const pending = scrapedGauge(
  'outbox_pending_events',
  'Events written to an outbox and not yet removed after their publish, by collection',
  ['collection'],
  readOutboxes,
);
const oldest = scrapedGauge(
  'outbox_oldest_event_age_seconds',
  'Age of the oldest event still in an outbox, by collection (0: none)',
  ['collection'],
  readOutboxes,
);

/** The publisher, each publish timed (outcome ok or failed). */
export function timedPublisher(publisher: EventPublisher): EventPublisher {
  return {
    async publish(event) {
      const end = publishDuration.startTimer();
      try {
        await publisher.publish(event);
        end({ outcome: 'ok' });
      } catch (err) {
        end({ outcome: 'failed' });
        throw err;
      }
    },
  };
}

/** Serves the backlog of these outbox collections at each scrape, with the events waiting under `marks`. */
export function watchOutboxes(db: Db, collections: string[], marks?: OutboxMarks): void {
  watched.push({ db, collections, marks });
}

async function readAll(): Promise<void> {
  const now = Date.now();
  await Promise.all(
    watched.flatMap(({ db, collections, marks }) =>
      collections.map(async (collection) => {
        try {
          const docs = await db
            .collection<{ outbox?: Pick<DomainEvent, 'created_at'>[] }>(collection)
            .find(
              { outbox_pending: true },
              { projection: { _id: 0, 'outbox.created_at': 1 }, timeoutMS: SCRAPE_READ_TIMEOUT_MS },
            )
            .limit(SCRAPE_DOCUMENTS)
            .toArray();
          const marked = marks?.waitingIn(collection);
          let events = marked?.events ?? 0;
          let first = marked?.oldestAt ?? Infinity;
          for (const doc of docs) {
            for (const event of doc.outbox ?? []) {
              events++;
              first = Math.min(first, Date.parse(event.created_at) || Infinity);
            }
          }
          pending.set({ collection }, events);
          oldest.set({ collection }, first === Infinity ? 0 : Math.max(0, (now - first) / 1000));
        } catch {
          // The store unreachable: the figures stay as last read (the probes and store metrics tell).
        }
      }),
    ),
  );
}
