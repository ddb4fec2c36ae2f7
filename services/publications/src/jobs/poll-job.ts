// The DJEN poll on agenda's schedule, every PUBLICATIONS_POLL_INTERVAL, and on demand
// (POST /v1/publications/sync). agenda's own job lock is not exclusive on FerretDB,
// so a run holds a lease in the store (store/run-lease.ts), renewed between requests:
// across replicas one poll runs at a time, and a replica that finds it held skips.
import { hostname } from 'node:os';
import { Agenda } from 'agenda';
import { MongoBackend } from '@agendajs/mongo-backend';
import type { Db } from 'mongodb';
import type { Logger } from '@lpm/shared/logger';
import { RunLease } from '@lpm/shared/store/run-lease';
import type { Poller, PollSummary } from '../domain/poller.ts';

const JOB = 'publications:djen-poll';
const LEASE_KEY = 'publications:djen-poll';

export interface PollJobOptions {
  db: Db;
  poller: Poller;
  intervalMs: number;
  /** The lease's period: a replica that dies holding it keeps others out for at most two. Default 60 s. */
  leaseMs?: number;
  logger?: Logger;
}

export class PollJob {
  private readonly opts: PollJobOptions;
  private agenda: Agenda | null = null;
  private backend: MongoBackend | null = null;
  private readonly inFlight = new Set<Promise<unknown>>();
  private stopping = false;

  constructor(opts: PollJobOptions) {
    this.opts = opts;
  }

  /** One poll under the lease, awaited; null when another replica (or this one) holds it, or the job is stopping. */
  runOnce(): Promise<PollSummary | null> {
    return this.track(this.takeLease().then((lease) => (lease ? this.pollUnder(lease) : null)));
  }

  /** A poll started now in the background (POST /v1/publications/sync); false when one is already under way. */
  async trigger(): Promise<boolean> {
    const lease = await this.track(this.takeLease());
    if (!lease) return false;
    this.track(this.pollUnder(lease)).catch((err: unknown) => this.opts.logger?.error({ err }, 'DJEN poll failed'));
    return true;
  }

  private async takeLease(): Promise<RunLease | null> {
    return this.stopping ? null : RunLease.take(this.opts.db, LEASE_KEY, this.opts.leaseMs ?? 60_000);
  }

  private track<T>(run: Promise<T>): Promise<T> {
    this.inFlight.add(run);
    void run.catch(() => {}).finally(() => this.inFlight.delete(run));
    return run;
  }

  private async pollUnder(lease: RunLease): Promise<PollSummary> {
    try {
      const summary = await this.opts.poller.run(async () => !this.stopping && (await lease.renew()));
      if (summary.requests > 0) this.opts.logger?.info(summary, 'DJEN poll done');
      return summary;
    } finally {
      await lease.release().catch(() => {});
    }
  }

  async start(): Promise<void> {
    if (this.agenda) return;
    this.stopping = false;
    const { db, intervalMs, logger } = this.opts;
    this.backend = new MongoBackend({ mongo: db });
    const agenda = new Agenda({
      backend: this.backend,
      processEvery: intervalMs,
      name: `publications@${hostname()}:${process.pid}`,
    });
    this.agenda = agenda;
    agenda.on('error', (err) => logger?.error({ err, job: JOB }, 'publications scheduler error'));
    agenda.on(`fail:${JOB}`, (err) => logger?.error({ err }, 'DJEN poll failed; tried again at the next interval'));
    agenda.define(JOB, async () => void (await this.runOnce()));
    await agenda.start();
    await agenda.every(intervalMs, JOB);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const { agenda, backend } = this;
    this.agenda = this.backend = null;
    await agenda?.stop(false);
    await Promise.allSettled([...this.inFlight]);
    await backend?.disconnect();
  }
}
