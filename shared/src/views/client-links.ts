// Clients as the other services see them. Whether a client exists is asked of the
// clients service at the moment of the write; the names shown beside records come
// from the local view that client events keep current (projections are for display).
import { clientNotFound } from '../errors.ts';
import { isId } from '../ids.ts';
import type { ClientFacts } from '../upstream/clients-service.ts';
import type { Caller } from '../upstream/service-client.ts';
import type { ClientView } from './client-view-entity.ts';
import type { ViewsRepository } from './views-repository.ts';


export interface ClientLookup {
  facts(who: Caller, clientId: string): Promise<ClientFacts | null>;
}

export function viewOf(teamId: string, c: ClientFacts): ClientView {
  return { _id: c.id, team_id: teamId, name: c.name, type: c.type, email: c.email ?? null, phone: c.phone ?? null, status: c.status, as_of: new Date(c.updated_at) };
}

export class ClientLinks {
  private readonly clients: ClientLookup;
  private readonly views: ViewsRepository<ClientView>;

  constructor(clients: ClientLookup, views: ViewsRepository<ClientView>) {
    this.clients = clients;
    this.views = views;
  }

  /** The client as the clients service has it now; 404 `Client not found` when it is not the team's. */
  async require(who: Caller, clientId: string): Promise<ClientView> {
    if (!isId('cli', clientId)) throw clientNotFound();
    const facts = await this.clients.facts(who, clientId);
    if (!facts) throw clientNotFound();
    const view = viewOf(who.teamId, facts);
    await this.views.record(view);
    return view;
  }

  find(teamId: string, ids: (string | null)[]): Promise<Map<string, ClientView>> {
    return this.views.find(teamId, ids);
  }

  /** A client event's news (events may arrive out of order: newer facts win). */
  record(teamId: string, facts: ClientFacts): Promise<void> {
    return this.views.record(viewOf(teamId, facts));
  }
}
