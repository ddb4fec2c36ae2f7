// The local view of the team's case numbers that matching reads, fed by case events.
// Written without the document lock: one conditional update (not older than what is
// kept), or an insert when there is none.
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from '@lpm/shared/store/duplicate-key';
import type { CaseNumberRecord } from './publication-entity.ts';

export class CaseNumbersRepository {
  private readonly views: Collection<CaseNumberRecord>;

  constructor(db: Db) {
    this.views = db.collection<CaseNumberRecord>('publication_case_numbers');
  }

  /** Keeps the case's number unless newer news was kept; true when this news was kept. */
  async record(view: CaseNumberRecord): Promise<boolean> {
    const { _id, ...fields } = view;
    const done = await this.views.updateOne({ _id, team_id: view.team_id, as_of: { $lte: view.as_of } }, { $set: fields });
    if (done.matchedCount > 0) return true;
    try {
      await this.views.insertOne(view);
      return true;
    } catch (e) {
      if (isDuplicateKey(e)) return false;
      throw e;
    }
  }

  /** The team's cases by number (20 digits) among `digits`; a number two cases share goes to the first found. */
  async casesOf(teamId: string, digits: string[]): Promise<Map<string, string>> {
    if (digits.length === 0) return new Map();
    const found = await this.views.find({ team_id: teamId, digits: { $in: digits } }, { projection: { _id: 1, digits: 1 } }).toArray();
    const byDigits = new Map<string, string>();
    for (const v of found) if (v.digits && !byDigits.has(v.digits)) byDigits.set(v.digits, v._id);
    return byDigits;
  }
}
