// The teams whose court calendar or time zone change the services have yet to apply
// (one document per team, `calendar_syncs`), with when to tell or ask them next. Each
// write holds the team's document lock: FerretDB does not isolate a conditional
// delete from a concurrent write.
import type { Collection, Db } from 'mongodb';
import { withDocumentLock } from '@lpm/shared/store/lock';
import type { CalendarSyncRecord, SyncPart } from './entities.ts';
import { backoffDelayMs } from '@lpm/shared/backoff';

const COLLECTION = 'calendar_syncs';

const partsOf = (row: CalendarSyncRecord): SyncPart[] => row.parts ?? ['court_calendar', 'timezone'];

/** Teams told or asked per retry pass. */
const PASS_LIMIT = 100;

export class CalendarSyncsRepository {
  private readonly db: Db;
  private readonly syncs: Collection<CalendarSyncRecord>;

  constructor(db: Db) {
    this.db = db;
    this.syncs = db.collection<CalendarSyncRecord>(COLLECTION);
  }

  /**
   * Records that `by` changed the `parts` of the team's settings at `changedAt`, to be
   * sent by the retry pass from `nextAt` on. A later change replaces an earlier one,
   * keeping the parts of it not applied yet.
   */
  async mark(teamId: string, changedAt: Date, by: string, nextAt: Date, parts: SyncPart[]): Promise<void> {
    await withDocumentLock(this.db, COLLECTION, teamId, async () => {
      const earlier = await this.syncs.findOne({ _id: teamId });
      const all = [...new Set([...(earlier ? partsOf(earlier) : []), ...parts])].sort();
      await this.syncs.replaceOne(
        { _id: teamId },
        { changed_at: changedAt, by, next_at: nextAt, attempts: 0, parts: all },
        { upsert: true },
      );
    });
  }

  /** The parts the team's change in flight changed; none when it has none. */
  async partsOf(teamId: string): Promise<SyncPart[]> {
    const row = await this.syncs.findOne({ _id: teamId });
    return row ? partsOf(row) : [];
  }

  /**
   * The changes due at `now`, those due longest ago first. A document has at most one
   * per team, and a team whose services keep failing is due later each time, so it
   * never holds back teams due before it. The collection holds the teams with a change
   * in flight: read whole, filtered here (FerretDB would apply a range in Go anyway).
   */
  async pending(now: Date, limit = PASS_LIMIT): Promise<{ teamId: string; changedAt: Date; by: string }[]> {
    const rows = await this.syncs.find({}).toArray();
    return rows
      .map((r) => ({ teamId: r._id, changedAt: r.changed_at, by: r.by, due: (r.next_at ?? r.changed_at).getTime() }))
      .filter((r) => r.due <= now.getTime())
      .sort((a, b) => a.due - b.due)
      .slice(0, limit)
      .map(({ teamId, changedAt, by }) => ({ teamId, changedAt, by }));
  }

  /** The services answered for the change of `changedAt`, still running: asked again at the next pass, failures forgotten. */
  async answered(teamId: string, changedAt: Date): Promise<void> {
    await this.update(teamId, changedAt, (row) => (row.attempts ? { attempts: 0, next_at: new Date(0) } : null));
  }

  /** A service failed for the change of `changedAt`: its next ask waits `firstMs`, doubling with each failure in a row, up to `capMs`. */
  async failed(teamId: string, changedAt: Date, firstMs: number, capMs: number): Promise<void> {
    await this.update(teamId, changedAt, (row) => {
      const attempts = (row.attempts ?? 0) + 1;
      return { attempts, next_at: new Date(Date.now() + backoffDelayMs(attempts - 1, { firstMs, maxMs: capMs })) };
    });
  }

  /** Done for the change of `changedAt` and any before it; a later change stays pending. */
  async done(teamId: string, changedAt: Date): Promise<void> {
    await withDocumentLock(this.db, COLLECTION, teamId, async () => {
      const row = await this.syncs.findOne({ _id: teamId });
      if (row && row.changed_at.getTime() <= changedAt.getTime()) await this.syncs.deleteOne({ _id: teamId });
    });
  }

  /** Sets `fields(row)` on the team's record of the change of `changedAt` (not a later one); null sets nothing. */
  private async update(
    teamId: string,
    changedAt: Date,
    fields: (row: CalendarSyncRecord) => Partial<CalendarSyncRecord> | null,
  ): Promise<void> {
    await withDocumentLock(this.db, COLLECTION, teamId, async () => {
      const row = await this.syncs.findOne({ _id: teamId });
      const set = row && row.changed_at.getTime() === changedAt.getTime() ? fields(row) : null;
      if (set) await this.syncs.updateOne({ _id: teamId }, { $set: set });
    });
  }
}
