// The first fill of the view of case numbers: cases that were there before this
// service first ran, or whose events it never saw, are read from the cases service
// (every team's, page by page by id) and recorded as their events would be, so newer
// news the consumer already kept stays (the view keeps the latest updated_at) and
// the team's unmatched publications of their numbers are linked. It starts after the
// case events' consumer, whose queue then holds every change made while it reads.
// One process does it at a time (a RunLease, renewed before each page); the others
// look again later, until the marker says it is done. The marker keeps the last case
// done, so a stopped fill resumes there; one that outlives its lease meets a second
// runner on the same cases, and recording them twice changes nothing.
import type { Db } from 'mongodb';
import type { Logger } from '@lpm/shared/logger';
import type { BackgroundTask } from '@lpm/shared/service/runner';
import { RunLease } from '@lpm/shared/store/run-lease';
import { backoffDelayMs } from '@lpm/shared/backoff';
import type { CaseNumbersRepository } from '../data/case-numbers-repository.ts';
import type { Publications } from '../domain/publications.ts';
import type { CaseNumbersSource } from '../upstream/cases-numbers.ts';

const LEASE_KEY = 'publications:case-numbers-backfill';

export interface CaseNumbersBackfillOptions {
  db: Db;
  source: CaseNumbersSource;
  caseNumbers: CaseNumbersRepository;
  publications: Pick<Publications, 'recordCase'>;
  logger?: Pick<Logger, 'info' | 'warn'>;
  /** Cases asked for at once. Default 500. */
  pageSize?: number;
  /** The lease's period. Default 60 s. */
  leaseMs?: number;
  /** The wait before looking again while another process holds the lease. Default 60 s. */
  retryMs?: number;
  /** The first wait after a failure (the cases service still starting), doubling up to ten minutes. Default 5 s. */
  failedMs?: number;
}

/** How a run ended: done (now or before), left to the lease's holder, or stopped with the task. */
export type BackfillOutcome = 'done' | 'held' | 'stopped';

export class CaseNumbersBackfill implements BackgroundTask {
  private readonly opts: CaseNumbersBackfillOptions;
  private stopping = false;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private failures = 0;

  constructor(opts: CaseNumbersBackfillOptions) {
    this.opts = opts;
  }

  /** Starts the fill in the background (a big one takes minutes): start does not wait for it. */
  async start(): Promise<void> {
    this.stopping = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** One run, awaited: the whole fill unless it is done already, another process holds it, or the task stops. */
  async runOnce(): Promise<BackfillOutcome> {
    if ((await this.opts.caseNumbers.backfill())?.done_at) return 'done';
    const lease = await RunLease.take(this.opts.db, LEASE_KEY, this.opts.leaseMs ?? 60_000);
    if (!lease) return 'held';
    try {
      return await this.fill(lease);
    } finally {
      await lease.release().catch(() => {}); // expires by itself otherwise
    }
  }

  private schedule(delayMs: number): void {
    if (this.stopping) return;
    this.timer = setTimeout(() => {
      this.running = this.runOnce().then(
        (outcome) => {
          this.failures = 0;
          if (outcome === 'held') this.schedule(this.retryMs);
        },
        (err: unknown) => {
          const waitMs = backoffDelayMs(this.failures++, { firstMs: this.opts.failedMs ?? 5000, maxMs: 600_000 });
          this.opts.logger?.warn({ err, retry_in_ms: waitMs }, 'case numbers backfill failed; resumed later');
          this.schedule(waitMs);
        },
      );
    }, delayMs);
    this.timer.unref();
  }

  private get retryMs(): number {
    return this.opts.retryMs ?? 60_000;
  }

  private async fill(lease: RunLease): Promise<BackfillOutcome> {
    const { source, caseNumbers, publications } = this.opts;
    // Read again under the lease: the holder before may have finished meanwhile.
    const state = await caseNumbers.backfill();
    if (state?.done_at) return 'done';
    let after = state?.after ?? null;
    let cases = 0;
    for (;;) {
      if (this.stopping) return 'stopped';
      if (!(await lease.renew())) return 'held';
      const page = await source.page(after, this.opts.pageSize ?? 500);
      for (const c of page.items) {
        await publications.recordCase({
          teamId: c.team_id,
          caseId: c.id,
          number: c.number,
          asOf: new Date(c.updated_at),
        });
      }
      cases += page.items.length;
      after = page.next ?? after;
      await caseNumbers.storeBackfill(after, page.next === null);
      if (page.next === null) {
        this.opts.logger?.info({ cases }, 'case numbers backfilled from the cases service');
        return 'done';
      }
    }
  }
}
