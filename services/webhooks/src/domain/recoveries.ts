// Recover since a time (POST /v1/webhooks/{id}/recover): every delivery of a window
// that failed for good, or was skipped while the webhook was inactive, sent again,
// oldest first, in the background; at most MAX_RECOVERED a call, one recovery of a
// webhook at a time across processes. Its progress is stored after each page, so a
// recovery whose process died is resumed by the maintenance job of any process.
import { newId } from '@lpm/shared/ids';
import { exact } from '@lpm/shared/http/schemas';
import type { Logger } from '@lpm/shared/logger';
import { DAY_MS, iso } from '@lpm/shared/time';
import type { RecoveriesRepository, RecoveryCursor, RecoveryLease } from '../data/recoveries-repository.ts';
import type { DeliveryRecord, WebhookRecoveryRecord } from '../data/webhook-entity.ts';
import {
  recoverSinceInFuture,
  recoverSinceTooOld,
  recoverUntilBeforeSince,
  recoveryNotFound,
  recoveryRunning,
  webhookInactive,
} from '../contract/webhook-errors.ts';
import {
  MAX_RECOVERED,
  RECOVER_WINDOW_DAYS,
  type RecoverBody,
  type WebhookRecovery,
  type WebhookRecoveryStarted,
} from '../contract/webhook-schemas.ts';
import type { Webhooks } from './webhooks.ts';

/** Deliveries re-queued between two stores of the progress (and renewals of the lease). */
const PAGE = 100;
/** Stalled recoveries resumed by one maintenance run, at most. */
const RESUMED_PER_RUN = 20;

type Who = { teamId: string };

export interface RecoveriesDeps {
  recoveries: RecoveriesRepository;
  webhooks: Webhooks;
  /** Queues one more attempt of a delivery now, marked as this recovery's. */
  requeue(d: DeliveryRecord, recoveryId: string): Promise<void>;
  /** Queues again the attempt `requeue` queued for a delivery it made pending (a copy already queued is dropped). */
  queueAgain(d: DeliveryRecord): Promise<void>;
  logger: Logger;
  /** The most deliveries one call re-queues (MAX_RECOVERED). */
  maxPerCall?: number;
}

export class Recoveries {
  private readonly deps: RecoveriesDeps;
  /** Recoveries this process runs now. */
  private readonly runs = new Map<string, Promise<void>>();

  constructor(deps: RecoveriesDeps) {
    this.deps = deps;
  }

  async start(who: Who, webhookId: string, body: RecoverBody): Promise<WebhookRecoveryStarted> {
    const webhook = await this.deps.webhooks.load(who.teamId, webhookId);
    if (!webhook.active) throw webhookInactive();
    const now = new Date();
    const { since, until } = windowOf(body, now);
    const lease = await this.deps.recoveries.lease(webhookId);
    if (!lease) throw recoveryRunning();
    try {
      // One that died is still running: the maintenance job resumes it.
      if (await this.deps.recoveries.runningOf(webhookId)) throw recoveryRunning();
      const total = await this.deps.recoveries.countRecoverable(
        webhookId,
        since,
        until,
        this.deps.maxPerCall ?? MAX_RECOVERED,
      );
      const status = total === 0 ? 'completed' : 'running';
      const record: WebhookRecoveryRecord = {
        _id: newId('rcv'),
        team_id: who.teamId,
        webhook_id: webhookId,
        since,
        until,
        status,
        queued: 0,
        total,
        cursor_at: null,
        cursor_id: null,
        created_at: now,
        updated_at: now,
        finished_at: total === 0 ? now : null,
      };
      await this.deps.recoveries.insert(record);
      if (total > 0) this.runInBackground(record, lease, false);
      else await lease.release();
      return exact<WebhookRecoveryStarted>()({ id: record._id, status, queued: 0, total });
    } catch (e) {
      await lease.release().catch(() => {});
      throw e;
    }
  }

  async get(who: Who, webhookId: string, recoveryId: string): Promise<WebhookRecovery> {
    await this.deps.webhooks.load(who.teamId, webhookId);
    const r = await this.deps.recoveries.get(who.teamId, webhookId, recoveryId);
    if (!r) throw recoveryNotFound();
    return exact<WebhookRecovery>()({
      id: r._id,
      webhook_id: r.webhook_id,
      status: r.status,
      queued: r.queued,
      total: r.total,
      since: iso(r.since),
      until: iso(r.until),
      created_at: iso(r.created_at),
      finished_at: iso(r.finished_at),
    });
  }

  /** Resumes recoveries left running by a process that died (the maintenance job): those whose lease is free. */
  async resumeStalled(): Promise<number> {
    let resumed = 0;
    for (const r of await this.deps.recoveries.running(RESUMED_PER_RUN)) {
      if (this.runs.has(r._id)) continue;
      const lease = await this.deps.recoveries.lease(r.webhook_id);
      if (!lease) continue;
      this.runInBackground(r, lease, true);
      resumed++;
    }
    return resumed;
  }

  /** Waits for the recoveries this process runs (a stop, a test). */
  async settled(): Promise<void> {
    await Promise.all(this.runs.values());
  }

  private runInBackground(r: WebhookRecoveryRecord, lease: RecoveryLease, resumed: boolean): void {
    const run = this.run(r, lease, resumed)
      .catch((err: unknown) => {
        this.deps.logger.error(
          { err, recovery_id: r._id, webhook_id: r.webhook_id },
          'webhook recovery stopped; resumed later',
        );
      })
      .finally(() => {
        this.runs.delete(r._id);
        return lease.release().catch(() => {});
      });
    this.runs.set(r._id, run);
  }

  /** Re-queues the recovery's deliveries a page at a time after where it got to, storing its progress after each page. */
  private async run(r: WebhookRecoveryRecord, lease: RecoveryLease, resumed: boolean): Promise<void> {
    let queued = r.queued;
    if (resumed) {
      queued = await this.deps.recoveries.countRequeued(r._id, r.webhook_id);
      // The run that died may have made deliveries of its last page pending without queueing their attempts:
      // queued again a page at a time, the lease renewed before each, as the pages below.
      const owed = await this.deps.recoveries.pendingRequeued(r);
      for (let i = 0; i < owed.length; i += PAGE) {
        if (!(await lease.renew())) return;
        await Promise.all(owed.slice(i, i + PAGE).map((d) => this.deps.queueAgain(d)));
      }
    }
    let cursor: RecoveryCursor | null = r.cursor_at && r.cursor_id ? { at: r.cursor_at, id: r.cursor_id } : null;
    while (queued < r.total) {
      if (!(await lease.renew())) return;
      const page = await this.deps.recoveries.nextRecoverable(
        r.webhook_id,
        r.since,
        r.until,
        cursor,
        Math.min(PAGE, r.total - queued),
      );
      if (page.length === 0) break;
      // A page's deliveries together: one after another, a page on a busy store outlasted
      // the lease (renewed once a page), and the run stopped until maintenance resumed it.
      await Promise.all(page.map((d) => this.deps.requeue(d, r._id)));
      queued += page.length;
      const last = page[page.length - 1];
      cursor = { at: last.created_at, id: last._id };
      await this.deps.recoveries.progress(r._id, queued, cursor);
    }
    await this.deps.recoveries.finish(r._id, queued);
  }
}

/** The window asked for: since at most RECOVER_WINDOW_DAYS back and not ahead, until after it (default now). */
function windowOf(body: RecoverBody, now: Date): { since: Date; until: Date } {
  const since = new Date(body.since);
  const until = body.until === undefined ? now : new Date(body.until);
  if (since.getTime() < now.getTime() - RECOVER_WINDOW_DAYS * DAY_MS) throw recoverSinceTooOld(RECOVER_WINDOW_DAYS);
  if (since.getTime() > now.getTime()) throw recoverSinceInFuture();
  if (until.getTime() <= since.getTime()) throw recoverUntilBeforeSince();
  return { since, until };
}
