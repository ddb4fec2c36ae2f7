// Each webhook's counters over its delivery attempts, kept apart from the webhook
// (`webhook_counters`, one document a webhook) and written by one fold at a time:
// FerretDB does not isolate concurrent updates of a document, so a writer of its
// own keeps them from losing an update, and a change of the webhook from losing one
// of theirs. Each attempt is stored with a tally (`attempt_tallies`); the fold,
// every second under a lock of its own (whichever replica takes it), adds the
// tallies of every webhook to their counters, a batch at a time: one read of the
// tallies, one of their webhooks' counters, an update per webhook in the batch, and
// one delete of the batch (FerretDB deletes many rows in one statement, where it
// updates them one by one). Exactly once: a webhook's update names the attempts it
// added (`last_counted`), so a crash before the delete leaves their tallies named,
// and the next fold deletes them without adding them again. Attempts an earlier
// version stored `counted: false` are counted the same way first, and then marked.
import type { Db } from 'mongodb';
import { DOCUMENT_LOCK_MS, tryDocumentLock } from '@lpm/shared/store/lock';
import type { AttemptRecord, AttemptTallyRecord, WebhookCountersRecord, WebhookRecord } from './webhook-entity.ts';

/** Tallies a fold reads at a time. */
const FOLD_BATCH = 2000;

/** Where a fold's batch comes from, and how the batch is taken off it once added. */
interface TallySource {
  read(limit: number): Promise<Counted[]>;
  done(ids: string[]): Promise<void>;
}

/** A webhook's counters over its delivery attempts. */
export interface WebhookCounters {
  total_deliveries: number;
  failed_deliveries: number;
  last_triggered_at: Date | null;
}

type Counted = Pick<AttemptTallyRecord, '_id' | 'webhook_id' | 'ok' | 'at'>;

export class CountersRepository {
  private readonly db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  private get counters() {
    return this.db.collection<WebhookCountersRecord>('webhook_counters');
  }

  private get attempts() {
    return this.db.collection<AttemptRecord>('attempts');
  }

  private get webhooks() {
    return this.db.collection<WebhookRecord>('webhooks');
  }

  private get tallies() {
    return this.db.collection<AttemptTallyRecord>('attempt_tallies');
  }

  /**
   * Attempts an earlier version left `counted: false`, marked once added (first: their
   * webhook's own `last_counted` holds only while no counters document exists); then
   * the tallies, deleted once added.
   */
  private get sources(): TallySource[] {
    const projection = { _id: 1, webhook_id: 1, ok: 1, at: 1 };
    return [
      {
        read: (limit) => this.attempts.find<Counted>({ counted: false }, { projection }).limit(limit).toArray(),
        done: async (ids) => void (await this.attempts.updateMany({ counted: false, _id: { $in: ids } }, { $set: { counted: true } })),
      },
      {
        read: (limit) => this.tallies.find({}, { projection }).limit(limit).toArray(),
        done: async (ids) => void (await this.tallies.deleteMany({ _id: { $in: ids } })),
      },
    ];
  }

  /** The counters of these webhooks of one team, as of the last fold. */
  async ofTeam(teamId: string, webhooks: WebhookRecord[]): Promise<Map<string, WebhookCounters>> {
    const kept = new Map((await this.counters.find({ team_id: teamId }).toArray()).map((c) => [c._id, countersOf(c)]));
    for (const w of webhooks) if (!kept.has(w._id)) kept.set(w._id, (await this.base(w)).counters);
    return kept;
  }

  /**
   * Adds every attempt not yet counted to its webhook's counters, unless another
   * replica's fold is under way; returns the number added. Batches while a whole
   * one was read, within half the lock's time.
   */
  async fold(): Promise<number> {
    const lock = await tryDocumentLock(this.db, 'webhook_counters', 'fold');
    if (!lock) return 0;
    try {
      let added = 0;
      for (const source of this.sources) {
        while (Date.now() - lock.acquiredAt < DOCUMENT_LOCK_MS / 2) {
          const batch = await source.read(FOLD_BATCH);
          if (batch.length === 0) break;
          added += await this.addBatch(batch);
          await source.done(batch.map((a) => a._id));
          if (batch.length < FOLD_BATCH) break;
        }
      }
      return added;
    } finally {
      await lock.release().catch(() => {});
    }
  }

  private async addBatch(batch: Counted[]): Promise<number> {
    const byWebhook = Map.groupBy(batch, (a) => a.webhook_id);
    const stored = new Map((await this.counters.find({ _id: { $in: [...byWebhook.keys()] } }).toArray()).map((c) => [c._id, c]));
    let added = 0;
    for (const [webhookId, attempts] of byWebhook) {
      added += await this.addTo(webhookId, attempts, stored.get(webhookId));
    }
    return added;
  }

  /** Adds a webhook's attempts of the batch that its last fold did not add already. */
  private async addTo(webhookId: string, attempts: Counted[], stored: WebhookCountersRecord | undefined): Promise<number> {
    let from = stored && { counters: countersOf(stored), teamId: stored.team_id, added: stored.last_counted };
    if (!from) {
      const webhook = await this.webhooks.findOne({ _id: webhookId });
      if (!webhook) return 0; // deleted: its history goes (or went) with it
      const base = await this.base(webhook);
      from = { ...base, teamId: webhook.team_id };
    }
    const before = new Set(from.added);
    const fresh = attempts.filter((a) => !before.has(a._id));
    if (fresh.length === 0) return 0;
    let last = from.counters.last_triggered_at;
    for (const a of fresh) if (!last || a.at > last) last = a.at;
    const next: WebhookCountersRecord = {
      _id: webhookId,
      team_id: from.teamId,
      total_deliveries: from.counters.total_deliveries + fresh.length,
      failed_deliveries: from.counters.failed_deliveries + fresh.filter((a) => !a.ok).length,
      last_triggered_at: last,
      last_counted: fresh.map((a) => a._id),
    };
    if (stored) await this.counters.updateOne({ _id: webhookId }, { $set: next });
    else await this.counters.insertOne(next);
    return fresh.length;
  }

  /**
   * The counters of a webhook that has no counters document: those it kept itself
   * before they moved here (with the attempts its last count added), or for one
   * older still, its attempts counted so far (every one not `counted: false` and
   * without a tally still waiting).
   */
  private async base(webhook: WebhookRecord): Promise<{ counters: WebhookCounters; added: string[] }> {
    if (typeof webhook.total_deliveries === 'number' && typeof webhook.failed_deliveries === 'number') {
      const counters = { total_deliveries: webhook.total_deliveries, failed_deliveries: webhook.failed_deliveries, last_triggered_at: webhook.last_triggered_at ?? null };
      return { counters, added: webhook.last_counted ?? [] };
    }
    const waiting = new Set((await this.tallies.find({ webhook_id: webhook._id }, { projection: { _id: 1 } }).toArray()).map((t) => t._id));
    const counted = (await this.attempts.find({ webhook_id: webhook._id, counted: { $ne: false } }, { projection: { ok: 1, at: 1 } }).toArray()).filter((a) => !waiting.has(a._id));
    let last: Date | null = null;
    for (const a of counted) if (!last || a.at > last) last = a.at;
    return { counters: { total_deliveries: counted.length, failed_deliveries: counted.filter((a) => !a.ok).length, last_triggered_at: last }, added: [] };
  }
}

function countersOf(c: WebhookCountersRecord): WebhookCounters {
  return { total_deliveries: c.total_deliveries, failed_deliveries: c.failed_deliveries, last_triggered_at: c.last_triggered_at };
}
