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
// adding them again. What earlier versions stored in other shapes is converted once,
// before the first fold (counters-migration.ts).
//
// The same update keeps the webhook's last success and the failures after it: the one
// record of its failures in a row (Deactivation.afterFailures reads it after a fold).
//
// The same update counts the deliveries of the delivery log by their minute, from the
// tallies that name one (delivery-log-counts.ts), and the fold moves the minutes of
// past hours out to their hour documents first.
import type { Db } from 'mongodb';
import { DOCUMENT_LOCK_MS, tryDocumentLock } from '@lpm/shared/store/lock';
import { bucketOf, HOUR_MS } from '@lpm/shared/store/markers';
import { SWEEP } from '@lpm/shared/store/time-budgets';
import { WebhookData } from './collections.ts';
import {
  addMinutes,
  countAt,
  decodeMinutes,
  DeliveryLogCounts,
  encodeMinutes,
  splitBeforeHour,
  type LogMove,
  type MinuteCounts,
} from './delivery-log-counts.ts';
import type { AttemptTallyRecord, WebhookCountersRecord, WebhookRecord } from './webhook-entity.ts';

/** Tallies a fold reads at a time. */
export const FOLD_BATCH = 2000;

/** The lock one fold at a time holds (and the conversion of earlier shapes, and retention's recount). */
export const FOLD_LOCK = { collection: 'webhook_counters', id: 'fold' };

/** Failures after the last success a counters document keeps: more than any count of failures in a row asked for. */
export const RUN_KEPT = 16;

/** A webhook's counters over its delivery attempts. */
export interface WebhookCounters {
  total_deliveries: number;
  failed_deliveries: number;
  last_triggered_at: Date | null;
  test_deliveries: number;
  test_failed_deliveries: number;
}

/** An attempt (or a skip) as a fold adds it. */
export type Counted = Pick<AttemptTallyRecord, '_id' | 'webhook_id' | 'ok' | 'at' | 'logged' | 'skipped' | 'test'>;

/** A webhook's counters document as a fold writes it, and the move of its past hours that goes first. */
interface Planned {
  next: WebhookCountersRecord;
  insert: boolean;
  move: LogMove | null;
  added: number;
  /** Whether it adds a failure to the webhook's failures in a row. */
  failed: boolean;
}

export class CountersRepository extends WebhookData {
  readonly log: DeliveryLogCounts;
  /** Webhooks whose failures in a row this process's folds added to, since takeFailing. */
  private failing = new Set<string>();

  constructor(db: Db) {
    super(db);
    this.log = new DeliveryLogCounts(db);
  }

  /**
   * After retention purged the deliveries last changed before `cutoff`: the log's
   * minutes of the hours up to the cutoff's moved out of the counters documents, and
   * those hours counted again from what is left. Under the fold's lock (the counters
   * documents are the fold's); false when a fold holds it (the next run does it).
   */
  async recountLogBefore(cutoff: Date): Promise<boolean> {
    const lock = await tryDocumentLock(this.db, FOLD_LOCK.collection, FOLD_LOCK.id);
    if (!lock) return false;
    try {
      const upto = bucketOf(cutoff, HOUR_MS) + 1;
      for (const c of await this.collections.counters
        .find({}, { projection: { log_minutes: 1, log_rev: 1 }, ...SWEEP })
        .toArray()) {
        const { before, rest } = splitBeforeHour(decodeMinutes(c.log_minutes), upto);
        if (before.size === 0) continue;
        const rev = c.log_rev ?? 0;
        await this.log.move([{ id: `${c._id}:${rev}`, webhookId: c._id, minutes: before }]);
        await this.collections.counters.updateOne(
          { _id: c._id },
          { $set: { log_minutes: encodeMinutes(rest), log_rev: rev + 1 } },
        );
      }
      for (const [webhookId, hours] of await this.log.hoursBefore(upto)) await this.log.recount(webhookId, hours);
      return true;
    } finally {
      await lock.release().catch(() => {});
    }
  }

  /** The counters of these webhooks of one team, as of the last fold. */
  async ofTeam(teamId: string, webhooks: WebhookRecord[]): Promise<Map<string, WebhookCounters>> {
    const kept = new Map(
      (await this.collections.counters.find({ team_id: teamId }).toArray()).map((c) => [c._id, countersOf(c)]),
    );
    for (const w of webhooks) if (!kept.has(w._id)) kept.set(w._id, NO_COUNTS);
    return kept;
  }

  /**
   * How many of the webhook's attempts since `since` failed after its last success,
   * up to `n`, as of the last fold: read from its counters document alone.
   */
  async failuresInARow(webhookId: string, since: Date, n: number): Promise<number> {
    const c = await this.collections.counters.findOne({ _id: webhookId }, { projection: { failed_since_success: 1 } });
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
    const lock = await tryDocumentLock(this.db, FOLD_LOCK.collection, FOLD_LOCK.id);
    if (!lock) return 0;
    try {
      const projection = { _id: 1, webhook_id: 1, ok: 1, at: 1, logged: 1, skipped: 1, test: 1 };
      let added = 0;
      while (Date.now() - lock.acquiredAt < DOCUMENT_LOCK_MS / 2) {
        const batch = await this.collections.tallies.find({}, { projection }).limit(FOLD_BATCH).toArray();
        if (batch.length === 0) break;
        added += await this.add(batch);
        await this.dropTallies(batch);
        if (batch.length < FOLD_BATCH) break;
      }
      return added;
    } finally {
      await lock.release().catch(() => {});
    }
  }

  /**
   * A delete per webhook, all in one command: the local store sends the webhook's equality to SQL and matches
   * the ids among its few tallies, where an `$in` alone reads every tally and compares each with every id.
   */
  private async dropTallies(batch: Counted[]): Promise<void> {
    const deletes = [...Map.groupBy(batch, (t) => t.webhook_id)].map(([webhookId, tallies]) => ({
      deleteMany: { filter: { webhook_id: webhookId, _id: { $in: tallies.map((t) => t._id) } } },
    }));
    await this.collections.tallies.bulkWrite(deletes, { ordered: false });
  }

  /**
   * Adds a batch of attempts to their webhooks' counters, but those each webhook's
   * last update added already; returns the number added. Under the fold's lock.
   */
  async add(batch: Counted[]): Promise<number> {
    const byWebhook = Map.groupBy(batch, (a) => a.webhook_id);
    const stored = new Map(
      (await this.collections.counters.find({ _id: { $in: [...byWebhook.keys()] } }).toArray()).map((c) => [c._id, c]),
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
      if (insert) await this.collections.counters.insertOne(next);
      else await this.collections.counters.updateOne({ _id: next._id }, { $set: next });
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
      const webhook = await this.collections.webhooks.findOne({ _id: webhookId }, { projection: { team_id: 1 } });
      if (!webhook) return null; // deleted: its history goes (or went) with it
      from = { counters: NO_COUNTS, teamId: webhook.team_id, added: [] };
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
      // Made here only for a webhook without one, whose deliveries all carry the log's markers.
      log_ready: stored?.log_ready ?? true,
      test_deliveries: from.counters.test_deliveries + tests.length,
      test_failed_deliveries: from.counters.test_failed_deliveries + tests.filter((a) => !a.ok).length,
    };
    const move = past.size > 0 ? { id: `${webhookId}:${rev}`, webhookId, minutes: past } : null;
    const failed = attempts.some((a) => !a.ok);
    return { next, insert: !stored, move, added: fresh.length, failed };
  }
}

/** The counters of a webhook nothing was counted for. */
export const NO_COUNTS: WebhookCounters = {
  total_deliveries: 0,
  failed_deliveries: 0,
  last_triggered_at: null,
  test_deliveries: 0,
  test_failed_deliveries: 0,
};

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
