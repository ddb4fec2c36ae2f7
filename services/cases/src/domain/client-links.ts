// Clients as cases see them. Whether a client exists is asked of the clients
// service at the moment of the write; names shown on cases come from a local
// view that client events keep current (ARCHITECTURE.md: projections are for display).
import type { Db } from 'mongodb';
import { notFound } from '@lpm/shared/errors';
import { isId } from '@lpm/shared/ids';
import { withDocumentLock } from '@lpm/shared/store/lock';
import type { Caller, ServiceClient } from '@lpm/shared/upstream/service-client';
import type { ClientView } from '../data/case-entity.ts';

const VIEWS = 'client_views';

/** The fields of a client's read shape that cases keep. */
export interface ClientFacts {
  id: string;
  name: string;
  type: string;
  email: string | null;
  phone: string | null;
  status: string;
  updated_at: string;
}

export const clientNotFound = () => notFound('Client not found');

export function viewOf(teamId: string, c: ClientFacts): ClientView {
  return { _id: c.id, team_id: teamId, name: c.name, type: c.type, email: c.email ?? null, phone: c.phone ?? null, status: c.status, as_of: new Date(c.updated_at) };
}

export class ClientLinks {
  private readonly db: Db;
  private readonly clients: ServiceClient;

  constructor(db: Db, clients: ServiceClient) {
    this.db = db;
    this.clients = clients;
  }

  private get views() {
    return this.db.collection<ClientView>(VIEWS);
  }

  /** The client as the clients service has it now; 404 `Client not found` when it is not the team's. */
  async require(who: Caller, clientId: string): Promise<ClientView> {
    if (!isId('cli', clientId)) throw clientNotFound();
    const res = await this.clients.request<{ data: ClientFacts }>(who, 'GET', `/internal/clients/${encodeURIComponent(clientId)}`);
    if (res.status === 404) throw clientNotFound();
    if (res.status !== 200) throw new Error(`clients service answered ${res.status} to a client lookup`);
    const view = viewOf(who.teamId, res.body.data);
    await this.record(view);
    return view;
  }

  async find(teamId: string, ids: (string | null)[]): Promise<Map<string, ClientView>> {
    const wanted = [...new Set(ids.filter((id): id is string => !!id))];
    if (wanted.length === 0) return new Map();
    const rows = await this.views.find({ _id: { $in: wanted }, team_id: teamId }).toArray();
    return new Map(rows.map((v) => [v._id, v]));
  }

  /** Stores a client's facts unless the view already holds newer ones (events may arrive out of order). */
  async record(view: ClientView): Promise<void> {
    await withDocumentLock(this.db, VIEWS, view._id, async () => {
      const current = await this.views.findOne({ _id: view._id });
      if (current && current.as_of > view.as_of) return;
      const { _id, ...fields } = view;
      await this.views.updateOne({ _id }, { $set: fields }, { upsert: true });
    });
  }
}
