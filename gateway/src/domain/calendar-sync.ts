// A change of a team's court calendar re-computes the due dates of its rule-based
// deadline activities, which the activities service owns; a change of its time zone
// re-arms the instants the zone decides in cases, activities and financial records.
// The change is recorded (calendar_syncs) before the settings are written, with the
// parts it changed: only their owners are told (each run rewrites every record it
// covers, so a calendar change does not re-arm every open activity's time signals). Each service records the change and answers at once, 202
// while its run rewrites the team's records a page at a time, 200 once that run is
// done (shared/src/jobs/team-syncs.ts): the gateway learns of the completion by
// asking again, and removes its record only when every service answered done for
// the change as it stood then, or a later one. So a crash or an unavailable service
// loses nothing, and a run is never started twice. A team whose services fail backs
// off (its next ask doubles away, up to backoffCapMs); teams due sooner go first, so
// one that keeps failing never holds back the others.
import type { Identity } from '@lpm/shared/identity';
import type { Logger } from '@lpm/shared/logger';
import type { CalendarSyncsRepository } from '../data/calendar-syncs-repository.ts';
import type { SyncPart } from '../data/entities.ts';
import type { DeadlineOwner } from '../upstream/activities-service.ts';
import type { TimeZoneOwners } from '../upstream/time-zone-owners.ts';
import { settingsOf, type Accounts } from './accounts.ts';

export interface CalendarSyncOptions {
  syncs: CalendarSyncsRepository;
  accounts: Accounts;
  deadlines: DeadlineOwner;
  zones: TimeZoneOwners;
  logger: Pick<Logger, 'warn'>;
  /**
   * How old a recorded change must be before the retry pass sends it: longer than a
   * settings request takes, so the pass never sends the calendar from before a write
   * still under way, and by then the team's calendar is the one to send. Also the
   * first wait after a failure.
   */
  graceMs: number;
  /** The longest wait after failures in a row (default 10 min). */
  backoffCapMs?: number;
}

export class CalendarSync {
  private readonly opts: CalendarSyncOptions;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(opts: CalendarSyncOptions) {
    this.opts = opts;
  }

  /** Before the settings write: the change `who` made to `parts`, which must reach the services. */
  mark(who: Pick<Identity, 'teamId' | 'userId'>, changedAt: Date, parts: SyncPart[]): Promise<void> {
    return this.opts.syncs.mark(
      who.teamId,
      changedAt,
      who.userId,
      new Date(changedAt.getTime() + this.opts.graceMs),
      parts,
    );
  }

  /**
   * Tells the owners of the changed parts the team's current calendar or time zone, on
   * behalf of the user who changed them (or asks how their runs stand), then clears the change
   * recorded at `recordedAt` (default: the settings' own change instant) once every
   * service is done; true then.
   */
  async push(teamId: string, by: string, recordedAt?: Date): Promise<boolean> {
    let recorded = recordedAt;
    try {
      const team = await this.opts.accounts.getTeam(teamId);
      const changedAt = team.settings_updated_at ?? new Date(0);
      recorded ??= changedAt;
      const who: Identity = { teamId, userId: by, scopes: ['read', 'write'], settings: settingsOf(team) };
      const parts = await this.opts.syncs.partsOf(teamId);
      const done = await Promise.all([
        !parts.includes('court_calendar') ||
          this.opts.deadlines.courtCalendarChanged(who, team.court_calendar, changedAt),
        !parts.includes('timezone') || this.opts.zones.timeZoneChanged(who, changedAt),
      ]);
      if (done.every(Boolean)) {
        await this.opts.syncs.done(teamId, recorded);
        return true;
      }
      await this.opts.syncs.answered(teamId, recorded);
      return false;
    } catch (e) {
      this.opts.logger.warn(
        { err: e, team: teamId },
        'court calendar or time zone not yet applied to the services; retried later',
      );
      if (recorded)
        await this.opts.syncs
          .failed(teamId, recorded, this.opts.graceMs, this.opts.backoffCapMs ?? 600_000)
          .catch(() => {});
      return false;
    }
  }

  /** One pass over the teams due to be told or asked again. */
  async retryPending(): Promise<void> {
    const due = await this.opts.syncs.pending(new Date());
    for (const { teamId, changedAt, by } of due) await this.push(teamId, by, changedAt);
  }

  start(intervalMs: number): void {
    this.timer = setInterval(() => {
      this.running ??= this.retryPending()
        .catch((e: unknown) => this.opts.logger.warn({ err: e }, 'court calendar retry pass failed'))
        .finally(() => (this.running = null));
    }, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
