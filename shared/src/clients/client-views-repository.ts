// The client_views collection (client-view-entity.ts). Events may arrive out of
// order: newer facts win.
import type { Db } from 'mongodb';
import { withDocumentLock } from '../store/lock.ts';
import type { ClientView } from './client-view-entity.ts';

const VIEWS = 'client_views';

export class ClientViewsRepository {
  private readonly db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  private get views() {
    return this.db.collection<ClientView>(VIEWS);
  }

  async find(teamId: string, ids: string[]): Promise<Map<string, ClientView>> {
    if (ids.length === 0) return new Map();
    const rows = await this.views.find({ _id: { $in: ids }, team_id: teamId }).toArray();
    return new Map(rows.map((v) => [v._id, v]));
  }

  /** Stores a client's facts unless the view already holds newer ones. */
  async record(view: ClientView): Promise<void> {
    await withDocumentLock(this.db, VIEWS, view._id, async () => {
      const current = await this.views.findOne({ _id: view._id });
      if (current && current.as_of > view.as_of) return;
      const { _id, ...fields } = view;
      await this.views.updateOne({ _id }, { $set: fields }, { upsert: true });
    });
  }
}
