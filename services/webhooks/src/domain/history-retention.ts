// Retention of the delivery history: deliveries (whole payloads, personal data
// included) and attempts older than WEBHOOK_HISTORY_RETENTION, by their day markers,
// the delivery log's counts of the hours purged, and the history of deleted webhooks
// that a crash left behind, by their tombstones. Every step is a delete of what is
// already out of use: two replicas running it at once, or a run repeated after a
// crash, remove nothing more, so no exactly-once claim is taken. Run by the
// retention job (jobs/retention.ts).
import { setTimeout as sleep } from 'node:timers/promises';
import type { CountersRepository } from '../data/counters-repository.ts';
import type { DeliveriesRepository } from '../data/deliveries-repository.ts';
import type { WebhooksRepository } from '../data/webhooks-repository.ts';

/** Retention runs at most this often. */
export const RETENTION_EVERY_MS = 3_600_000;
/** A deleted webhook's tombstone is kept this long: its history is dropped again at least once after the delete's in-flight attempts are over. */
const TOMBSTONE_KEPT_MS = RETENTION_EVERY_MS;
/** Tries to take the fold's lock for the log's recount, and the pause between them. */
const LOG_RECOUNT_TRIES = 20;
const LOG_RECOUNT_PAUSE_MS = 250;
/** Orphans must be older than the webhook list by this much: room for replicas' clocks. */
const CLOCK_MARGIN_MS = 60_000;

export interface HistoryRetentionOptions {
  webhooks: WebhooksRepository;
  deliveries: DeliveriesRepository;
  counters: CountersRepository;
  /** WEBHOOK_HISTORY_RETENTION. */
  retentionMs: number;
}

export interface Purged {
  deliveries: number;
  attempts: number;
  orphanDeliveries: number;
  orphanAttempts: number;
}

export class HistoryRetention {
  private readonly opts: HistoryRetentionOptions;

  constructor(opts: HistoryRetentionOptions) {
    this.opts = opts;
  }

  /** One retention pass, as of `now`. */
  async purge(now = new Date()): Promise<Purged> {
    const { webhooks, deliveries, counters } = this.opts;
    const cutoff = new Date(now.getTime() - this.opts.retentionMs);
    const old = await deliveries.purgeOlderThan(cutoff);
    // The delivery log's counts of the hours purged, under the counter fold's lock, which a fold holds for moments at a time.
    if (old.deliveries > 0 || old.ranged) {
      for (let tries = 0; tries < LOG_RECOUNT_TRIES && !(await counters.recountLogBefore(cutoff)); tries++)
        await sleep(LOG_RECOUNT_PAUSE_MS);
    }
    const deleted = await webhooks.purgeDeleted(new Date(now.getTime() - TOMBSTONE_KEPT_MS));
    // Orphans from before tombstones existed: looked for (a read of every record) when retention deletes by range (its first run, or after a long stop).
    const listedBefore = new Date(Date.now() - CLOCK_MARGIN_MS);
    const legacy = old.ranged
      ? await deliveries.purgeOrphans(await webhooks.allIds(), listedBefore)
      : { deliveries: 0, attempts: 0 };
    return {
      deliveries: old.deliveries,
      attempts: old.attempts,
      orphanDeliveries: deleted.deliveries + legacy.deliveries,
      orphanAttempts: deleted.attempts + legacy.attempts,
    };
  }
}
