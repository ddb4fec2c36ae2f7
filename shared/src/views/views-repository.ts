// Local views of records other services own (clients, cases) that a service shows
// beside its own: projections fed by the owners' events and by the checks made at
// write time, for display only. Events may arrive out of order: newer facts win.
import type { Db } from 'mongodb';
import { isDuplicateKey } from '../store/duplicate-key.ts';

export interface View {
  _id: string;
  team_id: string;
  as_of: Date;
}

// One view's writes in this process, one at a time. On MongoDB the conditional
// update below is atomic by itself; FerretDB 1.24 applies a filter in Go and then
// overwrites the document, so two writes of one view at once could let older facts
// win. Writes from two replicas at once can still do that on FerretDB (the local
// store), where a view is display-only and the next event of the record mends it.
const inFlight = new Map<string, Promise<void>>();

function serially(key: string, fn: () => Promise<void>): Promise<void> {
  const run = (inFlight.get(key) ?? Promise.resolve()).then(fn);
  const settled = run.catch(() => {});
  inFlight.set(key, settled);
  void settled.then(() => {
    if (inFlight.get(key) === settled) inFlight.delete(key);
  });
  return run;
}

/** Views remembered per repository as last stored here, the oldest forgotten first. */
const STORED_KEPT = 10_000;

const sameFields = (a: object, b: object) => {
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = Object.keys(x);
  return (
    keys.length === Object.keys(y).length &&
    keys.every((k) =>
      x[k] instanceof Date && y[k] instanceof Date ? x[k].getTime() === y[k].getTime() : x[k] === y[k],
    )
  );
};

export class ViewsRepository<V extends View> {
  private readonly db: Db;
  private readonly name: string;
  /**
   * The last view this process stored of each record: the store holds it or newer
   * facts (views are never deleted), so recording the same facts again (each link
   * check of a client that has not changed) writes nothing.
   */
  private readonly stored = new Map<string, V>();

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

  /**
   * Stores the facts unless the view already holds newer ones (or is another
   * team's): one conditional update, and an insert when there was no view.
   */
  record(view: V): Promise<void> {
    const { _id, ...fields } = view;
    const notNewer = { _id, team_id: view.team_id, as_of: { $lte: view.as_of } } as never;
    const update = async () => (await this.views.updateOne(notNewer, { $set: fields } as never)).matchedCount === 1;
    // False when there is a view already: newer, another team's, or just stored by another replica.
    const insert = async () => {
      try {
        await this.views.insertOne(view as never);
        return true;
      } catch (e) {
        if (!isDuplicateKey(e)) throw e;
        return false;
      }
    };
    return serially(`${this.db.databaseName}.${this.name}:${_id}`, async () => {
      const key = `${view.team_id}:${_id}`;
      const last = this.stored.get(key);
      if (last && sameFields(last, view)) return;
      if ((await update()) || (await insert()) || (await update())) this.remember(key, view);
    });
  }

  private remember(key: string, view: V): void {
    this.stored.delete(key);
    if (this.stored.size >= STORED_KEPT) this.stored.delete(this.stored.keys().next().value!);
    this.stored.set(key, view);
  }
}
