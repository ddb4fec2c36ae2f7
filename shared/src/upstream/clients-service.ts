// What a service asks the clients service, which owns clients: a client's facts at
// the moment of a write that links to it (GET /internal/clients/{id}).
import { isObject, type Caller, type ServiceClient } from './service-client.ts';

/** The fields of a client's read shape that other services keep. */
export interface ClientFacts {
  id: string;
  name: string;
  type: string;
  email: string | null;
  phone: string | null;
  status: string;
  updated_at: string;
}

const nullableString = (v: unknown) => v === null || v === undefined || typeof v === 'string';

export const isClientFacts = (d: unknown): d is ClientFacts =>
  isObject(d) &&
  ['id', 'name', 'type', 'status', 'updated_at'].every((k) => typeof d[k] === 'string') &&
  nullableString(d.email) &&
  nullableString(d.phone);

export class ClientsService {
  private readonly clients: ServiceClient;

  constructor(clients: ServiceClient) {
    this.clients = clients;
  }

  /** The client as the clients service has it now, or null when it is not the team's. */
  facts(who: Caller, clientId: string): Promise<ClientFacts | null> {
    return this.clients.dataOrNull(who, 'GET', `/internal/clients/${encodeURIComponent(clientId)}`, isClientFacts);
  }
}
