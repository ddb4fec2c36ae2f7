// The counters' data in the shapes earlier versions stored, converted once so the fold
// reads only tallies: a webhook without a counters document gets one, from the
// counters it kept itself (with the attempts its last count added) or, older still,
// from its attempts counted so far; attempts stored `counted: false` are added to
// their counters and marked; and the deliveries stored before the delivery log's
// markers are counted into its hours (`log_ready`). It runs before the first fold
// (CounterFold), under the fold's lock, a part at a time within the lock's time, and
// records that it ran in `webhook_migrations`: every later start reads that record only.
import type { Db } from 'mongodb';
import { DOCUMENT_LOCK_MS, tryDocumentLock } from '@lpm/shared/store/lock';
import { SWEEP } from '@lpm/shared/store/time-budgets';
import { WebhookData } from './collections.ts';
import { FOLD_BATCH, FOLD_LOCK, NO_COUNTS, type Counted, type CountersRepository } from './counters-repository.ts';
import { countAt, logMarkers, type MinuteCounts } from './delivery-log-counts.ts';
import type { WebhookRecord } from './webhook-entity.ts';

/** The record that the conversion ran, in `webhook_migrations`. */
export const COUNTERS_MIGRATION = 'counters';

export class CountersMigration extends WebhookData {
  private readonly counters: CountersRepository;
  private done = false;

  constructor(db: Db, counters: CountersRepository) {
    super(db);
    this.counters = counters;
  }

  /**
   * Whether the conversion has run, here or in another process; when it has not, it
   * goes on with it under the fold's lock (false while another process holds it, or
   * the lock's time ran out before the end: the next call goes on).
   */
  async run(): Promise<boolean> {
    if (this.done || (await this.ran())) return (this.done = true);
    const lock = await tryDocumentLock(this.db, FOLD_LOCK.collection, FOLD_LOCK.id);
    if (!lock) return false;
    try {
      if (await this.ran()) return (this.done = true);
      const hasTime = () => Date.now() - lock.acquiredAt < DOCUMENT_LOCK_MS / 2;
      await this.createCounters();
      if (!(await this.addUncounted(hasTime)) || !(await this.backfillLog(hasTime))) return false;
      await this.collections.migrations.updateOne(
        { _id: COUNTERS_MIGRATION },
        { $set: { done_at: new Date() } },
        { upsert: true },
      );
      return (this.done = true);
    } finally {
      await lock.release().catch(() => {});
    }
  }

  private async ran(): Promise<boolean> {
    return (await this.collections.migrations.findOne({ _id: COUNTERS_MIGRATION })) !== null;
  }

  /** A counters document for each webhook without one: from what the webhook kept, or from its attempts. */
  private async createCounters(): Promise<void> {
    const kept = new Set(
      (await this.collections.counters.find({}, { projection: { _id: 1 }, ...SWEEP }).toArray()).map((c) => c._id),
    );
    for (const webhook of await this.collections.webhooks.find({}, SWEEP).toArray()) {
      if (kept.has(webhook._id)) continue;
      const base = await this.base(webhook);
      await this.collections.counters.insertOne({
        _id: webhook._id,
        team_id: webhook.team_id,
        ...base.counters,
        last_counted: base.added,
        log_ready: false,
      });
    }
  }

  /**
   * The counters of a webhook that has no counters document: those it kept itself
   * (with the attempts its last count added), or its attempts counted so far (every
   * one not `counted: false` and without a tally still waiting for the fold).
   */
  private async base(webhook: WebhookRecord): Promise<{ counters: typeof NO_COUNTS; added: string[] }> {
    if (typeof webhook.total_deliveries === 'number' && typeof webhook.failed_deliveries === 'number') {
      const counters = {
        ...NO_COUNTS,
        total_deliveries: webhook.total_deliveries,
        failed_deliveries: webhook.failed_deliveries,
        last_triggered_at: webhook.last_triggered_at ?? null,
      };
      return { counters, added: webhook.last_counted ?? [] };
    }
    const { tallies } = this.collections;
    const waiting = new Set(
      (await tallies.find({ webhook_id: webhook._id }, { projection: { _id: 1 } }).toArray()).map((t) => t._id),
    );
    const counted = (
      await this.collections.attempts
        .find({ webhook_id: webhook._id, counted: { $ne: false } }, { projection: { ok: 1, at: 1 } })
        .toArray()
    ).filter((a) => !waiting.has(a._id));
    let last: Date | null = null;
    for (const a of counted) if (!last || a.at > last) last = a.at;
    return {
      counters: {
        ...NO_COUNTS,
        total_deliveries: counted.length,
        failed_deliveries: counted.filter((a) => !a.ok).length,
        last_triggered_at: last,
      },
      added: [],
    };
  }

  /**
   * Attempts stored `counted: false`, added to their counters a batch at a time and
   * then marked: a batch's update names them (`last_counted`), so a crash before the
   * marks leaves them named, and they are not added again. True once none is left.
   */
  private async addUncounted(hasTime: () => boolean): Promise<boolean> {
    const projection = { _id: 1, webhook_id: 1, ok: 1, at: 1, test: 1 };
    while (hasTime()) {
      const batch = await this.collections.attempts
        .find<Counted>({ counted: false }, { projection })
        .limit(FOLD_BATCH)
        .toArray();
      if (batch.length === 0) return true;
      await this.counters.add(batch);
      await this.collections.attempts.updateMany(
        { counted: false, _id: { $in: batch.map((a) => a._id) } },
        { $set: { counted: true } },
      );
    }
    return false;
  }

  /**
   * Counts in the log, for one counters document not `log_ready` at a time, the
   * deliveries stored before the markers: each marked first (its first attempt, if
   * still owed, then does not count it again), then all of them counted into the hour
   * documents under one name, so a repeat after a crash adds nothing. True once none is left.
   */
  private async backfillLog(hasTime: () => boolean): Promise<boolean> {
    const { deliveries } = this.collections;
    const owed = await this.collections.counters
      .find({ log_ready: { $ne: true } }, { projection: { _id: 1 } })
      .toArray();
    for (const c of owed) {
      const unmarked = await deliveries
        .find({ webhook_id: c._id, log_minute: { $exists: false } }, { projection: { created_at: 1 }, ...SWEEP })
        .toArray();
      for (const d of unmarked) {
        if (!hasTime()) return false;
        await deliveries.updateOne(
          { _id: d._id, log_minute: { $exists: false } },
          { $set: { ...logMarkers(c._id, d.created_at), log_backfilled: true } },
        );
      }
      const backfilled = await deliveries
        .find({ webhook_id: c._id, log_backfilled: true }, { projection: { created_at: 1 }, ...SWEEP })
        .toArray();
      const minutes: MinuteCounts = new Map();
      for (const d of backfilled) countAt(minutes, d.created_at);
      await this.counters.log.move([{ id: `backfill:${c._id}`, webhookId: c._id, minutes }]);
      await this.collections.counters.updateOne({ _id: c._id }, { $set: { log_ready: true } });
      if (!hasTime()) return false;
    }
    return true;
  }
}
