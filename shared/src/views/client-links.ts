// Clients as the other services see them: whether a client exists is asked of the
// clients service at the moment of a write; the names shown beside records come
// from the local view that client events keep current (linked-views.ts).
import { clientNotFound } from '../errors.ts';
import type { ClientFacts } from '../upstream/clients-service.ts';
import type { ClientView } from './client-view-entity.ts';
import { LinkedViews, type FactsLookup } from './linked-views.ts';
import type { ViewsRepository } from './views-repository.ts';

export type ClientLookup = FactsLookup<ClientFacts>;

function viewOf(teamId: string, c: ClientFacts): ClientView {
  return {
    _id: c.id,
    team_id: teamId,
    name: c.name,
    type: c.type,
    email: c.email ?? null,
    phone: c.phone ?? null,
    status: c.status,
    as_of: new Date(c.updated_at),
  };
}

/** The facts a view holds, as the clients service states them: what a check found, passed on to the service that asked for the write. */
export function factsOfView(v: ClientView): ClientFacts {
  return {
    id: v._id,
    name: v.name,
    type: v.type,
    email: v.email,
    phone: v.phone,
    status: v.status,
    updated_at: v.as_of.toISOString(),
  };
}

export class ClientLinks extends LinkedViews<ClientFacts, ClientView> {
  constructor(clients: ClientLookup, views: ViewsRepository<ClientView>) {
    super({ idKind: 'cli', lookup: clients, views, viewOf, notFound: clientNotFound });
  }
}
