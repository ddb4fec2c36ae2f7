// A change of a team's court calendar re-computes the due dates of its rule-based
// deadline activities, which the activities service owns; a change of its time zone
// re-arms the instants the zone decides in cases, activities and financial records
// (both are told on either change: each is idempotent). The change is recorded
// (calendar_syncs) before the settings are written, and removed only once the
// activities service has applied the team's calendar as it stood at that change or
// later; a failed or interrupted call is retried by the periodic pass, so a crash
// or an unavailable service loses nothing. Applying a calendar twice changes nothing.
import type { CourtCalendarSettings } from '@lpm/shared/court-calendar';
import type { Identity } from '@lpm/shared/identity';
import type { Logger } from '@lpm/shared/logger';
import type { CalendarSyncsRepository } from '../data/calendar-syncs-repository.ts';
import { settingsOf, type Accounts } from './accounts.ts';

/** The activities service, as the gateway tells it of a calendar (upstream/activities-service.ts). */
export interface DeadlineOwner {
  courtCalendarChanged(who: Identity, calendar: CourtCalendarSettings, changedAt: Date): Promise<void>;
}

/** The services whose stored instants a team's time zone decides (upstream/time-zone-owners.ts). */
export interface TimeZoneOwners {
  timeZoneChanged(who: Identity): Promise<void>;
}

export interface CalendarSyncOptions {
  syncs: CalendarSyncsRepository;
  accounts: Accounts;
  deadlines: DeadlineOwner;
  zones: TimeZoneOwners;
  logger: Pick<Logger, 'warn'>;
  /**
   * How old a recorded change must be before the retry pass sends it: longer than a
   * settings request takes, so the pass never sends the calendar from before a write
   * still under way, and by then the team's calendar is the one to send.
   */
  graceMs: number;
}

export class CalendarSync {
  private readonly opts: CalendarSyncOptions;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(opts: CalendarSyncOptions) {
    this.opts = opts;
  }

  /** Before the settings write: the change `who` made, which must reach the services. */
  mark(who: Pick<Identity, 'teamId' | 'userId'>, changedAt: Date): Promise<void> {
    return this.opts.syncs.mark(who.teamId, changedAt, who.userId);
  }

  /**
   * Tells the activities service the team's current calendar, on behalf of the user
   * who changed it, then clears the change recorded at `recordedAt` (default: the
   * settings' own change instant); false when it could not.
   */
  async push(teamId: string, by: string, recordedAt?: Date): Promise<boolean> {
    try {
      const team = await this.opts.accounts.getTeam(teamId);
      const changedAt = team.settings_updated_at ?? new Date(0);
      const who: Identity = { teamId, userId: by, scopes: ['read', 'write'], settings: settingsOf(team) };
      await this.opts.deadlines.courtCalendarChanged(who, team.court_calendar, changedAt);
      await this.opts.zones.timeZoneChanged(who);
      await this.opts.syncs.done(teamId, recordedAt ?? changedAt);
      return true;
    } catch (e) {
      this.opts.logger.warn({ err: e, team: teamId }, 'court calendar or time zone not yet applied to the services; retried later');
      return false;
    }
  }

  /** One pass over every team still to be told. */
  async retryPending(): Promise<void> {
    const due = await this.opts.syncs.pending(new Date(Date.now() - this.opts.graceMs));
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
