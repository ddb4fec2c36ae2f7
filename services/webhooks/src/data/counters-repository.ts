// Each webhook's counters over its delivery attempts, kept apart from the webhook
// (`webhook_counters`, one document a webhook) and written by one fold at a time:
// FerretDB does not isolate concurrent updates of a document, so a writer of its
// own keeps them from losing an update, and a change of the webhook from losing one
// of theirs. Each attempt is stored with a tally (`attempt_tallies`); the fold,
// every second under a lock of its own (whichever replica takes it), adds the
// tallies of every webhook to their counters, a batch at a time: one read of the
// tallies, one of their webhooks' counters, an update per webhook in the batch, and
// one delete command for the batch, a delete per webhook in it (FerretDB deletes
// many rows in one statement, where it updates them one by one). Exactly once: a
// webhook's update names the attempts it added (`last_counted`), so a crash before
// the delete leaves their tallies named, and the next fold deletes them without
// adding them again. Attempts an earlier
// version stored `counted: false` are counted the same way first, and then marked.
//
// The same update keeps the webhook's last success and the failures after it: the one
// record of its failures in a row (Deactivation.afterFailures reads it after a fold).
//
// The same update counts the deliveries of the delivery log by their minute, from the
// tallies that name one (delivery-log-counts.ts), and the fold moves the minutes of
// past hours out to their hour documents first. Under the same lock it counts, once
// per webhook, the deliveries stored before the log's markers (`backfillLog`).
import type { Db } from 'mongodb';
import { DOCUMENT_LOCK_MS, tryDocumentLock, type HeldLock } from '@lpm/shared/store/lock';
import { bucketOf, HOUR_MS } from '@lpm/shared/store/markers';
import { SWEEP } from '@lpm/shared/store/time-budgets';
import {
  addMinutes,
  countAt,
  decodeMinutes,
  DeliveryLogCounts,
  encodeMinutes,
  logMarkers,
  splitBeforeHour,
  type LogMove,
  type MinuteCounts,
} from './delivery-log-counts.ts';
import type {
  AttemptRecord,
  AttemptTallyRecord,
  DeliveryRecord,
  WebhookCountersRecord,
  WebhookRecord,
} from './webhook-entity.ts';

/** Tallies a fold reads at a time. */
const FOLD_BATCH = 2000;

/** Failures after the last success a counters document keeps: more than any count of failures in a row asked for. */
export const RUN_KEPT = 16;

/** Where a fold's batch comes from, and how the batch is taken off it once added. */
interface TallySource {
  read(limit: number): Promise<Counted[]>;
  done(batch: Counted[]): Promise<void>;
}

/** A webhook's counters over its delivery attempts. */
export interface WebhookCounters {
  total_deliveries: number;
  failed_deliveries: number;
  last_triggered_at: Date | null;
  test_deliveries: number;
  test_failed_deliveries: number;
}

type Counted = Pick<AttemptTallyRecord, '_id' | 'webhook_id' | 'ok' | 'at' | 'logged' | 'skipped' | 'test'>;

/** A webhook's counters document as a fold writes it, and the move of its past hours that goes first. */
interface Planned {
  next: WebhookCountersRecord;
  insert: boolean;
  move: LogMove | null;
  added: number;
  /** Whether it adds a failure to the webhook's failures in a row. */
  failed: boolean;
}

export class CountersRepository {
  private readonly db: Db;
  readonly log: DeliveryLogCounts;
  /** Set once no counters document was owed a log backfill; a counters document this process inserts sets it back. */
  private logBackfilled = false;
  /** Webhooks whose failures in a row this process's folds added to, since takeFailing. */
  private failing = new Set<string>();

  constructor(db: Db) {
    this.db = db;
    this.log = new DeliveryLogCounts(db);
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
    const projection = { _id: 1, webhook_id: 1, ok: 1, at: 1, logged: 1, skipped: 1, test: 1 };
    return [
      {
        read: (limit) => this.attempts.find<Counted>({ counted: false }, { projection }).limit(limit).toArray(),
        done: async (batch) =>
          void (await this.attempts.updateMany(
            { counted: false, _id: { $in: batch.map((a) => a._id) } },
            { $set: { counted: true } },
          )),
      },
      {
        read: (limit) => this.tallies.find({}, { projection }).limit(limit).toArray(),
        // A delete per webhook, all in one command: the local store sends the webhook's equality to SQL and
        // matches the ids among its few tallies, where an `$in` alone reads every tally and compares each with every id.
        done: async (batch) => {
          const deletes = [...Map.groupBy(batch, (t) => t.webhook_id)].map(([webhookId, tallies]) => ({
            deleteMany: { filter: { webhook_id: webhookId, _id: { $in: tallies.map((t) => t._id) } } },
          }));
          await this.tallies.bulkWrite(deletes, { ordered: false });
        },
      },
    ];
  }

  /**
   * After retention purged the deliveries last changed before `cutoff`: the log's
   * minutes of the hours up to the cutoff's moved out of the counters documents, and
   * those hours counted again from what is left. Under the fold's lock (the counters
   * documents are the fold's); false when a fold holds it (the next run does it).
   */
  async recountLogBefore(cutoff: Date): Promise<boolean> {
    const lock = await tryDocumentLock(this.db, 'webhook_counters', 'fold');
    if (!lock) return false;
    try {
      const upto = bucketOf(cutoff, HOUR_MS) + 1;
      for (const c of await this.counters
        .find({}, { projection: { log_minutes: 1, log_rev: 1 }, ...SWEEP })
        .toArray()) {
        const { before, rest } = splitBeforeHour(decodeMinutes(c.log_minutes), upto);
        if (before.size === 0) continue;
        const rev = c.log_rev ?? 0;
        await this.log.move([{ id: `${c._id}:${rev}`, webhookId: c._id, minutes: before }]);
        await this.counters.updateOne({ _id: c._id }, { $set: { log_minutes: encodeMinutes(rest), log_rev: rev + 1 } });
      }
      for (const [webhookId, hours] of await this.log.hoursBefore(upto)) await this.log.recount(webhookId, hours);
      return true;
    } finally {
      await lock.release().catch(() => {});
    }
  }

  /** The counters of these webhooks of one team, as of the last fold. */
  async ofTeam(teamId: string, webhooks: WebhookRecord[]): Promise<Map<string, WebhookCounters>> {
    const kept = new Map((await this.counters.find({ team_id: teamId }).toArray()).map((c) => [c._id, countersOf(c)]));
    for (const w of webhooks) if (!kept.has(w._id)) kept.set(w._id, (await this.base(w)).counters);
    return kept;
  }

  /**
   * How many of the webhook's attempts since `since` failed after its last success,
   * up to `n`, as of the last fold: read from its counters document alone.
   */
  async failuresInARow(webhookId: string, since: Date, n: number): Promise<number> {
    const c = await this.counters.findOne({ _id: webhookId }, { projection: { failed_since_success: 1 } });
    return Math.min(n, (c?.failed_since_success ?? []).filter((at) => at >= since).length);
  }

  /** The webhooks whose failures in a row grew in this process's folds since the last call (CounterFold checks them). */
  takeFailing(): string[] {
    const taken = [...this.failing];
    this.failing.clear();
    return taken;
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
          await source.done(batch);
          if (batch.length < FOLD_BATCH) break;
        }
      }
      await this.backfillLog(lock);
      return added;
    } finally {
      await lock.release().catch(() => {});
    }
  }

  private async addBatch(batch: Counted[]): Promise<number> {
    const byWebhook = Map.groupBy(batch, (a) => a.webhook_id);
    const stored = new Map(
      (await this.counters.find({ _id: { $in: [...byWebhook.keys()] } }).toArray()).map((c) => [c._id, c]),
    );
    const plans: Planned[] = [];
    for (const [webhookId, tallies] of byWebhook) {
      const plan = await this.plan(webhookId, tallies, stored.get(webhookId));
      if (plan) plans.push(plan);
    }
    // The past hours first: a fold that dies before its update moves them again, and the move is taken once.
    await this.log.move(plans.flatMap((p) => (p.move ? [p.move] : [])));
    for (const { next, insert, failed } of plans) {
      if (failed) this.failing.add(next._id);
      if (insert) {
        await this.counters.insertOne(next);
        this.logBackfilled = false;
      } else await this.counters.updateOne({ _id: next._id }, { $set: next });
    }
    return plans.reduce((n, p) => n + p.added, 0);
  }

  /** A webhook's counters with the tallies of the batch that its last fold did not add already; null when there are none. */
  private async plan(
    webhookId: string,
    tallies: Counted[],
    stored: WebhookCountersRecord | undefined,
  ): Promise<Planned | null> {
    let from = stored && { counters: countersOf(stored), teamId: stored.team_id, added: stored.last_counted };
    if (!from) {
      const webhook = await this.webhooks.findOne({ _id: webhookId });
      if (!webhook) return null; // deleted: its history goes (or went) with it
      const base = await this.base(webhook);
      from = { ...base, teamId: webhook.team_id };
    }
    const before = new Set(from.added);
    const fresh = tallies.filter((a) => !before.has(a._id));
    if (fresh.length === 0) return null;
    const attempts = fresh.filter((a) => !a.skipped && !a.test);
    const tests = fresh.filter((a) => a.test);
    let last = from.counters.last_triggered_at;
    for (const a of attempts) if (!last || a.at > last) last = a.at;
    const { lastSuccess, run } = failureRun(stored, attempts);
    const rev = stored?.log_rev ?? 0;
    // Only what the stored document holds moves: a repeated move then carries the same minutes.
    const { before: past, rest } = splitBeforeHour(decodeMinutes(stored?.log_minutes), bucketOf(Date.now(), HOUR_MS));
    const logged: MinuteCounts = new Map();
    for (const t of fresh) if (t.logged) countAt(logged, t.logged);
    const next: WebhookCountersRecord = {
      _id: webhookId,
      team_id: from.teamId,
      total_deliveries: from.counters.total_deliveries + attempts.length,
      failed_deliveries: from.counters.failed_deliveries + attempts.filter((a) => !a.ok).length,
      last_triggered_at: last,
      last_success_at: lastSuccess,
      failed_since_success: run,
      last_counted: fresh.map((a) => a._id),
      log_minutes: encodeMinutes(addMinutes(rest, logged)),
      log_rev: rev + 1,
      log_ready: stored?.log_ready ?? false,
      test_deliveries: from.counters.test_deliveries + tests.length,
      test_failed_deliveries: from.counters.test_failed_deliveries + tests.filter((a) => !a.ok).length,
    };
    const move = past.size > 0 ? { id: `${webhookId}:${rev}`, webhookId, minutes: past } : null;
    const failed = attempts.some((a) => !a.ok);
    return { next, insert: !stored, move, added: fresh.length, failed };
  }

  /**
   * Counts in the log, for one webhook whose counters document is not `log_ready` at a
   * time, the deliveries stored before the markers: each marked first (its first
   * attempt, if still owed, then does not count it again), then all of them counted
   * into the hour documents under one name, so a repeat after a crash adds nothing.
   * Stops when the fold's lock is half over; the next fold goes on.
   */
  private async backfillLog(lock: HeldLock): Promise<void> {
    if (this.logBackfilled) return;
    const deliveries = this.db.collection<DeliveryRecord>('deliveries');
    const hasTime = () => Date.now() - lock.acquiredAt < DOCUMENT_LOCK_MS / 2;
    const owed = await this.counters.find({ log_ready: { $ne: true } }, { projection: { _id: 1 } }).toArray();
    this.logBackfilled = owed.length === 0;
    for (const c of owed) {
      const unmarked = await deliveries
        .find({ webhook_id: c._id, log_minute: { $exists: false } }, { projection: { created_at: 1 }, ...SWEEP })
        .toArray();
      for (const d of unmarked) {
        if (!hasTime()) return;
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
      await this.log.move([{ id: `backfill:${c._id}`, webhookId: c._id, minutes }]);
      await this.counters.updateOne({ _id: c._id }, { $set: { log_ready: true } });
      if (!hasTime()) return;
    }
  }

  /**
   * The counters of a webhook that has no counters document: those it kept itself
   * before they moved here (with the attempts its last count added), or for one
   * older still, its attempts counted so far (every one not `counted: false` and
   * without a tally still waiting).
   */
  private async base(webhook: WebhookRecord): Promise<{ counters: WebhookCounters; added: string[] }> {
    if (typeof webhook.total_deliveries === 'number' && typeof webhook.failed_deliveries === 'number') {
      const counters = {
        ...NO_TESTS,
        total_deliveries: webhook.total_deliveries,
        failed_deliveries: webhook.failed_deliveries,
        last_triggered_at: webhook.last_triggered_at ?? null,
      };
      return { counters, added: webhook.last_counted ?? [] };
    }
    const waiting = new Set(
      (await this.tallies.find({ webhook_id: webhook._id }, { projection: { _id: 1 } }).toArray()).map((t) => t._id),
    );
    const counted = (
      await this.attempts
        .find({ webhook_id: webhook._id, counted: { $ne: false } }, { projection: { ok: 1, at: 1 } })
        .toArray()
    ).filter((a) => !waiting.has(a._id));
    let last: Date | null = null;
    for (const a of counted) if (!last || a.at > last) last = a.at;
    return {
      counters: {
        ...NO_TESTS,
        total_deliveries: counted.length,
        failed_deliveries: counted.filter((a) => !a.ok).length,
        last_triggered_at: last,
      },
      added: [],
    };
  }
}

const NO_TESTS = { test_deliveries: 0, test_failed_deliveries: 0 };

/**
 * A webhook's last success and the failures after it, with these attempts added: the
 * tallies come in any order, so a success drops the failures before it, and a failure
 * before the last success is left out.
 */
function failureRun(
  stored: WebhookCountersRecord | undefined,
  attempts: Counted[],
): { lastSuccess: Date | null; run: Date[] } {
  let lastSuccess = stored?.last_success_at ?? null;
  for (const a of attempts) if (a.ok && (!lastSuccess || a.at > lastSuccess)) lastSuccess = a.at;
  const failures = [...(stored?.failed_since_success ?? []), ...attempts.filter((a) => !a.ok).map((a) => a.at)];
  const run = failures
    .filter((at) => !lastSuccess || at > lastSuccess)
    .sort((a, b) => a.getTime() - b.getTime())
    .slice(-RUN_KEPT);
  return { lastSuccess, run };
}

function countersOf(c: WebhookCountersRecord): WebhookCounters {
  return {
    total_deliveries: c.total_deliveries,
    failed_deliveries: c.failed_deliveries,
    last_triggered_at: c.last_triggered_at,
    test_deliveries: c.test_deliveries ?? 0,
    test_failed_deliveries: c.test_failed_deliveries ?? 0,
  };
}
