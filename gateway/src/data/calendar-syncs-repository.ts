// The teams whose court calendar change the activities service has yet to apply
// (one document per team, `calendar_syncs`). Each write holds the team's document
// lock: FerretDB does not isolate a conditional delete from a concurrent write.
import type { Collection, Db } from 'mongodb';
import { withDocumentLock } from '@lpm/shared/store/lock';
import type { CalendarSyncRecord } from './entities.ts';

const COLLECTION = 'calendar_syncs';

export class CalendarSyncsRepository {
  private readonly db: Db;
  private readonly syncs: Collection<CalendarSyncRecord>;

  constructor(db: Db) {
    this.db = db;
    this.syncs = db.collection<CalendarSyncRecord>(COLLECTION);
  }

  /** Records that `by` changed the team's calendar at `changedAt` (a later change replaces an earlier one). */
  async mark(teamId: string, changedAt: Date, by: string): Promise<void> {
    await withDocumentLock(this.db, COLLECTION, teamId, () => this.syncs.replaceOne({ _id: teamId }, { changed_at: changedAt, by }, { upsert: true }));
  }

  /** The changes recorded before `before` still to be told, oldest first (a handful: each is removed once told). */
  async pending(before: Date, limit = 100): Promise<{ teamId: string; changedAt: Date; by: string }[]> {
    const rows = await this.syncs.find({ changed_at: { $lt: before } }, { sort: { changed_at: 1 }, limit }).toArray();
    return rows.map((r) => ({ teamId: r._id, changedAt: r.changed_at, by: r.by }));
  }

  /** Done for the change of `changedAt` and any before it; a later change stays pending. */
  async done(teamId: string, changedAt: Date): Promise<void> {
    await withDocumentLock(this.db, COLLECTION, teamId, async () => {
      const row = await this.syncs.findOne({ _id: teamId });
      if (row && row.changed_at.getTime() <= changedAt.getTime()) await this.syncs.deleteOne({ _id: teamId });
    });
  }
}
