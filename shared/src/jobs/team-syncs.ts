// A team's settings change that rewrites its records (a time zone re-arms due
// moments, a court calendar moves rule-based deadlines) runs here in pages, not in
// the request that tells the service of it. POST /internal/time-zone and
// /internal/court-calendar record the change in `team_syncs` (one document per kind
// and team: the settings to apply, as of which change, how far the run got) and
// answer at once: 202 while records are left, 200 once the run for that change, or
// a later one, is done. The gateway asks again until it reads done.
//
// A run marks each record it has done with the change it applies (the field
// `sync_<kind>` set to the change's instant, in the record's own write or, where
// nothing changed, all of a page's in one command) and reads the team's records
// without that mark, `windowSize` at a time, rewriting them `pageSize` at a time
// (their locks taken together: RecordStore.updateReads). So a run stopped anywhere
// (a restart, a failure) resumes with the records left, and a newer change, a new
// mark, starts over on every record. FerretDB filters such a read in SQL and decodes
// only `windowSize` of what PostgreSQL returns; a read by _id range and sort, which
// it does in Go over every matching record, took seconds a window for 5,000 deadlines.
// The list days its writes moved records between are kept in the document and
// counted again once, when the run ends: until then a list page by due date may
// place a moved record by its old day's count.
// One run per team at a time across processes: it holds the team's RunLease, renewed
// before each page, and a request or a pass that finds it held leaves the team to its
// holder. A page that outlives the lease (a stalled store) may meet a second runner
// on the same records; each record's write holds its document lock and goes through
// only at the version read, so the later one finds it done and only marks it.
// A run that fails backs off (`backoffMs`, doubling up to `backoffCapMs`) while
// other teams go on: the resume pass, every `passMs`, starts each team whose run is
// due, at most `runsAtOnce` at a time in a process, and a team backing off is not due.
import type { Db } from 'mongodb';
import type { Identity, TeamSettings } from '../identity.ts';
import type { Logger } from '../logger.ts';
import type { BackgroundTask } from '../service/runner.ts';
import type { Day } from '../store/list-counts.ts';
import type { Mark } from '../store/record-store-types.ts';

export type { Mark };
import { withDocumentLock } from '../store/lock.ts';
import { RunLease } from '../store/run-lease.ts';
import { backoffDelayMs } from '../backoff.ts';

export const TEAM_SYNCS = 'team_syncs';

/** Records rewritten under one set of locks, between two stores of the cursor. */
export const SYNC_PAGE = 100;
/** Records read at once, then rewritten a page at a time (each read passes, in SQL, over the records already marked). */
export const SYNC_WINDOW = 500;
/** A failed run waits this long before it is tried again, doubling with each failure in a row, up to SYNC_BACKOFF_CAP_MS. */
export const SYNC_BACKOFF_MS = 5000;
export const SYNC_BACKOFF_CAP_MS = 600_000;
/** How often the resume pass looks for runs to start or resume. */
export const SYNC_PASS_MS = 5000;
/** A run's lease period: it renews it before each page, and one that dies keeps its team at most twice this long. */
export const SYNC_LEASE_MS = 15_000;
/** Runs one process makes at once (each on its own team). */
export const SYNC_RUNS_AT_ONCE = 2;

/** Whose change a run applies: the team, the user who made it (the actor of the events it causes), the settings after it. */
export type SyncWho = Pick<Identity, 'teamId' | 'userId' | 'settings'>;

/** What a page's rewrite came to. */
export interface Rewritten {
  changed: number;
  /** The list days its writes moved records between (RecordStore.updateReads): recounted once, when the run ends. */
  movedDays: Day[];
  /** The error that stopped it part way, if one did: what it wrote is kept (its days with it) and the run backs off. */
  failed?: unknown;
}

/** What a kind of sync does with a team's records (the service's domain provides it). */
export interface TeamSyncWork<R extends { _id: string } = { _id: string }> {
  /** At most `limit` of the team's records it rewrites that do not carry `mark` (RecordStore.readUnmarked). */
  read(teamId: string, mark: Mark, limit: number): Promise<R[]>;
  /** Brings `records` to the settings of the change made at `changedAt`, marking each it has done with `mark` (RecordStore.updateReads). */
  rewrite(who: SyncWho, changedAt: Date, records: R[], mark: Mark): Promise<Rewritten>;
  /** Counts the team's list `days` again (ListBuckets.recountDays); rejects when it could not. */
  recount(teamId: string, days: Day[]): Promise<void>;
  /** Whether records a done run brought to `done` are already right for `next` (the part of the settings it applies is the same). */
  same(done: TeamSettings, next: TeamSettings): boolean;
}

export interface SyncState {
  done: boolean;
  /** Records the run changed so far. */
  changed: number;
}

interface SyncDoc {
  _id: string;
  team_id: string;
  kind: string;
  /** When the change this run applies was made (the gateway's settings change instant). */
  target: Date;
  user_id: string;
  settings: TeamSettings;
  /** 1 while records are left to rewrite: the resume pass's equality. */
  pending: 0 | 1;
  /** The last record done; null before the first page (a runner that finds it moved knows another went on). */
  cursor: string | null;
  changed: number;
  /** List days the run moved records between, not recounted yet (kept across a newer change). */
  moved_days: Day[];
  /** Failures in a row, and when the run may be tried again after the last. */
  failures: number;
  retry_at: Date | null;
  done_at: Date | null;
}

export interface TeamSyncsOptions {
  db: Db;
  logger: Pick<Logger, 'warn' | 'error'>;
  /** The kinds this service runs, by the name the request gives; a team's runs go in this order. */
  work: Record<string, TeamSyncWork>;
  pageSize?: number;
  windowSize?: number;
  passMs?: number;
  leaseMs?: number;
  backoffMs?: number;
  backoffCapMs?: number;
  runsAtOnce?: number;
}

const union = (days: Day[] | undefined, more: Day[]): Day[] => [...new Set([...(days ?? []), ...more])];

/** The mark of a run of `kind` applying the change made at `changedAt`: `sync_court_calendar: <ISO instant>`. */
export function syncMark(kind: string, changedAt: Date): Mark {
  return { [`sync_${kind.replaceAll('-', '_')}`]: changedAt.toISOString() };
}

export class TeamSyncs implements BackgroundTask {
  private readonly opts: TeamSyncsOptions;
  private readonly running = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private passing: Promise<void> | null = null;
  private stopping = false;

  constructor(opts: TeamSyncsOptions) {
    this.opts = opts;
  }

  private get syncs() {
    return this.opts.db.collection<SyncDoc>(TEAM_SYNCS);
  }

  /**
   * Records the change `who` made at `changedAt` (unless the run of this change, or
   * of a later one, is recorded already) and starts its run; resolves with how that
   * run stands.
   */
  async request(kind: string, who: SyncWho, changedAt: Date): Promise<SyncState> {
    const work = this.workOf(kind);
    const id = `${kind}:${who.teamId}`;
    const doc = await withDocumentLock(this.opts.db, TEAM_SYNCS, id, async (lease) => {
      const found = await this.syncs.findOne({ _id: id });
      if (found && found.target.getTime() >= changedAt.getTime()) return found;
      const alreadyRight = found !== null && found.pending === 0 && work.same(found.settings, who.settings);
      const run: SyncDoc = {
        _id: id,
        team_id: who.teamId,
        kind,
        target: changedAt,
        user_id: who.userId,
        settings: who.settings,
        pending: alreadyRight ? 0 : 1,
        cursor: null,
        changed: 0,
        moved_days: found?.moved_days ?? [],
        failures: 0,
        retry_at: null,
        done_at: alreadyRight ? new Date() : null,
      };
      lease.check();
      await this.syncs.replaceOne({ _id: id }, run, { upsert: true });
      return run;
    });
    if (doc.pending) this.kick(who.teamId);
    return { done: doc.pending === 0, changed: doc.changed };
  }

  async start(): Promise<void> {
    this.stopping = false;
    this.timer = setInterval(() => void this.pass(), this.opts.passMs ?? SYNC_PASS_MS);
    this.timer.unref();
    void this.pass();
  }

  /** Stops the pass; runs under way stop before their next page (their cursor is stored). */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    await this.passing;
    await Promise.all(this.running.values());
  }

  /** Starts the run of every team with one due (and not running here). */
  pass(): Promise<void> {
    this.passing ??= this.dueTeams()
      .then((teams) => teams.forEach((t) => this.kick(t)))
      .catch((err: unknown) => this.opts.logger.error({ err }, 'team sync pass failed; tried again at the next one'))
      .finally(() => (this.passing = null));
    return this.passing;
  }

  /** Teams with a run pending and not backing off, the longest waiting first. */
  private async dueTeams(): Promise<string[]> {
    const now = Date.now();
    const due = (
      await this.syncs.find({ pending: 1 }, { projection: { team_id: 1, target: 1, retry_at: 1 } }).toArray()
    )
      .map((d) => ({ team: d.team_id, at: (d.retry_at ?? d.target).getTime() }))
      .filter((d) => d.at <= now)
      .sort((a, b) => a.at - b.at);
    return [...new Set(due.map((d) => d.team))];
  }

  private kick(teamId: string): void {
    if (this.stopping || this.running.has(teamId) || this.running.size >= (this.opts.runsAtOnce ?? SYNC_RUNS_AT_ONCE))
      return;
    const run = this.runTeam(teamId)
      .catch((err: unknown) =>
        this.opts.logger.error({ err, team: teamId }, 'team sync run failed; resumed by the next pass'),
      )
      .finally(() => this.running.delete(teamId));
    this.running.set(teamId, run);
  }

  /** Every kind of the team's runs in turn, under the team's lease; nothing when someone else holds it. */
  private async runTeam(teamId: string): Promise<void> {
    const lease = await RunLease.take(this.opts.db, `team-sync:${teamId}`, this.opts.leaseMs ?? SYNC_LEASE_MS);
    if (!lease) return;
    try {
      for (const kind of Object.keys(this.opts.work)) if (!(await this.runKind(kind, teamId, lease))) return;
    } finally {
      await lease.release().catch(() => {}); // expires by itself otherwise
    }
  }

  /** The team's run of `kind`, page by page, until done, failed or replaced; false when it must stop (the lease lost, the process stopping). */
  private async runKind(kind: string, teamId: string, lease: RunLease): Promise<boolean> {
    const work = this.workOf(kind);
    const windowSize = this.opts.windowSize ?? SYNC_WINDOW;
    const pageSize = this.opts.pageSize ?? SYNC_PAGE;
    for (;;) {
      const doc = await this.syncs.findOne({ _id: `${kind}:${teamId}` });
      if (!doc || doc.pending === 0 || (doc.retry_at && doc.retry_at.getTime() > Date.now())) return true;
      const who: SyncWho = { teamId, userId: doc.user_id, settings: doc.settings };
      const mark = syncMark(kind, doc.target);
      let replaced = false;
      try {
        const records = await work.read(teamId, mark, windowSize);
        let cursor = doc.cursor;
        for (let i = 0; i < records.length && !replaced; i += pageSize) {
          if (this.stopping || !(await lease.renew())) return false;
          const page = records.slice(i, i + pageSize);
          const { changed, movedDays, failed } = await work.rewrite(who, doc.target, page, mark);
          if (failed !== undefined) return this.backOff(doc, failed, movedDays);
          const after = page[page.length - 1]._id;
          const stored = await this.store(
            doc,
            (cur) => ({
              cursor: after,
              changed: cur.changed + changed,
              moved_days: union(cur.moved_days, movedDays),
              failures: 0,
            }),
            cursor,
          );
          replaced = !stored;
          cursor = after;
        }
        if (!replaced && records.length === 0) {
          // The list days counted again once for the whole run: per page, a day of a team's deadlines was read again and again.
          const counted = (await this.syncs.findOne({ _id: doc._id }))?.moved_days ?? [];
          if (counted.length) await work.recount(teamId, counted);
          const finished = (cur: SyncDoc) => ({
            pending: 0 as const,
            done_at: new Date(),
            retry_at: null,
            moved_days: (cur.moved_days ?? []).filter((d) => !counted.includes(d)),
          });
          if (await this.store(doc, finished, cursor)) return true;
        }
      } catch (err) {
        return this.backOff(doc, err);
      }
    }
  }

  /** A page failed: the run waits (backoffMs doubling with each failure in a row, up to backoffCapMs), keeping the list days it moved records between. */
  private async backOff(doc: SyncDoc, err: unknown, movedDays: Day[] = []): Promise<true> {
    let waitMs = 0;
    await this.store(doc, (cur) => {
      waitMs = backoffDelayMs(cur.failures, {
        firstMs: this.opts.backoffMs ?? SYNC_BACKOFF_MS,
        maxMs: this.opts.backoffCapMs ?? SYNC_BACKOFF_CAP_MS,
      });
      return {
        failures: cur.failures + 1,
        retry_at: new Date(Date.now() + waitMs),
        moved_days: union(cur.moved_days, movedDays),
      };
    });
    this.opts.logger.warn(
      { err, team: doc.team_id, kind: doc.kind, retry_in_ms: waitMs },
      'team sync page failed; the run backs off and resumes with the records left',
    );
    return true;
  }

  /**
   * Writes `fields(current)` into the run of `doc` under its lock; false when a newer
   * change replaced it, or (`cursor` given) when its cursor is no longer `cursor`
   * (a runner slower than its lease finds another went on meanwhile): the caller
   * then reads the run again.
   */
  private store(
    doc: SyncDoc,
    fields: (current: SyncDoc) => Partial<SyncDoc>,
    cursor?: string | null,
  ): Promise<boolean> {
    return withDocumentLock(this.opts.db, TEAM_SYNCS, doc._id, async (lease) => {
      const current = await this.syncs.findOne({ _id: doc._id });
      if (!current || current.target.getTime() !== doc.target.getTime()) return false;
      if (cursor !== undefined && current.cursor !== cursor) return false;
      lease.check();
      await this.syncs.updateOne({ _id: doc._id }, { $set: fields(current) });
      return true;
    });
  }

  private workOf(kind: string): TeamSyncWork {
    const work = this.opts.work[kind];
    if (!work) throw new Error(`no team sync of kind ${kind} here`);
    return work;
  }
}
