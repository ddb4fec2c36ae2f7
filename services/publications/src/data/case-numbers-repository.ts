// The local view of the team's case numbers that matching reads, fed by case events.
// Written without the document lock: one conditional update (not older than what is
// kept), or an insert when there is none.
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from '@lpm/shared/store/duplicate-key';
import type { CaseNumberRecord } from './publication-entity.ts';

/**
 * How far the first fill of the view from the cases service got (jobs/case-numbers-backfill.ts):
 * the last case id done, and when it finished. Deleting it fills the view again.
 */
export interface CaseNumbersBackfill {
  _id: 'case-numbers';
  after: string | null;
  done_at: Date | null;
  updated_at: Date;
}

export class CaseNumbersRepository {
  private readonly views: Collection<CaseNumberRecord>;
  private readonly backfills: Collection<CaseNumbersBackfill>;

  constructor(db: Db) {
    this.views = db.collection<CaseNumberRecord>('publication_case_numbers');
    this.backfills = db.collection<CaseNumbersBackfill>('publication_backfills');
  }

  /** Where the first fill stands; null before it began. */
  backfill(): Promise<CaseNumbersBackfill | null> {
    return this.backfills.findOne({ _id: 'case-numbers' });
  }

  /** Records that the fill has done every case up to `after` (by id), and whether that was the last. */
  async storeBackfill(after: string | null, done: boolean): Promise<void> {
    const doc: CaseNumbersBackfill = {
      _id: 'case-numbers',
      after,
      done_at: done ? new Date() : null,
      updated_at: new Date(),
    };
    try {
      await this.backfills.replaceOne({ _id: doc._id }, doc, { upsert: true });
    } catch (e) {
      if (!isDuplicateKey(e)) throw e;
      await this.backfills.replaceOne({ _id: doc._id }, doc); // a runner past its lease created it just now
    }
  }

  /** Keeps the case's number unless newer news was kept; true when this news was kept. */
  async record(view: CaseNumberRecord): Promise<boolean> {
    const { _id, ...fields } = view;
    const done = await this.views.updateOne(
      { _id, team_id: view.team_id, as_of: { $lte: view.as_of } },
      { $set: fields },
    );
    if (done.matchedCount > 0) return true;
    try {
      await this.views.insertOne(view);
      return true;
    } catch (e) {
      if (isDuplicateKey(e)) return false;
      throw e;
    }
  }

  /**
   * The team's cases by number (20 digits) among `digits`; a number two cases share goes
   * to one of them. One equality query a number: FerretDB matches an `$in` in Go over
   * every case of the team, and only top-level equalities reach its SQL (docs/ferretdb.md).
   */
  async casesOf(teamId: string, digits: string[]): Promise<Map<string, string>> {
    const found = await Promise.all(
      digits.map((d) => this.views.findOne({ team_id: teamId, digits: d }, { projection: { _id: 1 } })),
    );
    const byDigits = new Map<string, string>();
    found.forEach((v, i) => v && byDigits.set(digits[i], v._id));
    return byDigits;
  }
}
