// Local views of records other services own (clients, cases) that a service shows
// beside its own: projections fed by the owners' events and by the checks made at
// write time, for display only. Events may arrive out of order: newer facts win.
import type { Db } from 'mongodb';
import { withDocumentLock } from '../store/lock.ts';

export interface View {
  _id: string;
  team_id: string;
  as_of: Date;
}

export class ViewsRepository<V extends View> {
  private readonly db: Db;
  private readonly name: string;

  constructor(db: Db, collection: string) {
    this.db = db;
    this.name = collection;
  }

  private get views() {
    return this.db.collection<V>(this.name);
  }

  async find(teamId: string, ids: (string | null | undefined)[]): Promise<Map<string, V>> {
    const wanted = [...new Set(ids.filter((id): id is string => !!id))];
    if (wanted.length === 0) return new Map();
    const rows = (await this.views.find({ _id: { $in: wanted }, team_id: teamId } as never).toArray()) as V[];
    return new Map(rows.map((v) => [v._id, v]));
  }

  /** Stores the facts unless the view already holds newer ones. */
  async record(view: V): Promise<void> {
    await withDocumentLock(this.db, this.name, view._id, async () => {
      const current = (await this.views.findOne({ _id: view._id } as never)) as V | null;
      if (current && (current.team_id !== view.team_id || current.as_of > view.as_of)) return;
      const { _id, ...fields } = view;
      await this.views.updateOne({ _id } as never, { $set: fields } as never, { upsert: true });
    });
  }
}
