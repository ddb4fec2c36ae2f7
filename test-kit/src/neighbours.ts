// The records a service's neighbours hold, per team, for tests that fake those
// neighbours in process: a record of another team is not found, as the real
// services answer.
import { newId } from '@lpm/shared/ids';
import type { CaseFacts } from '@lpm/shared/upstream/cases-service';
import type { ClientFacts } from '@lpm/shared/upstream/clients-service';
import type { DirectoryUser } from '@lpm/shared/upstream/user-directory';

interface Owned<T> {
  teamId: string;
  record: T;
}

/** What the cases, clients and deals services and the user directory know, per team. */
export class Neighbours {
  private readonly cases = new Map<string, Owned<CaseFacts>>();
  private readonly clients = new Map<string, Owned<ClientFacts>>();
  private readonly deals = new Map<string, Owned<string>>();
  private readonly users = new Map<string, Owned<DirectoryUser>>();

  addCase(teamId: string, title: string, number: string | null = null): CaseFacts {
    const facts = { id: newId('case'), title, number, updated_at: new Date().toISOString() };
    this.cases.set(facts.id, { teamId, record: facts });
    return facts;
  }

  addClient(teamId: string, name: string, email: string | null = null): ClientFacts {
    const facts: ClientFacts = {
      id: newId('cli'),
      name,
      type: 'PF',
      email,
      phone: null,
      status: 'active',
      updated_at: new Date().toISOString(),
    };
    this.clients.set(facts.id, { teamId, record: facts });
    return facts;
  }

  addDeal(teamId: string): string {
    const id = newId('deal');
    this.deals.set(id, { teamId, record: id });
    return id;
  }

  addUser(teamId: string, name: string, email: string): DirectoryUser {
    const user = { id: newId('user'), name, email };
    this.users.set(user.id, { teamId, record: user });
    return user;
  }

  /** The lookups a domain is given: each answers only for the record's own team. */
  readonly caseLookup = {
    facts: async (who: { teamId: string }, id: string) => ownedBy(this.cases.get(id), who.teamId),
  };
  readonly clientLookup = {
    facts: async (who: { teamId: string }, id: string) => ownedBy(this.clients.get(id), who.teamId),
  };
  readonly dealLookup = {
    exists: async (who: { teamId: string }, id: string) => ownedBy(this.deals.get(id), who.teamId) !== null,
  };
  readonly userDirectory = {
    find: async (teamId: string, ids: string[]) =>
      new Map(
        ids.flatMap((id) => {
          const user = ownedBy(this.users.get(id), teamId);
          return user ? [[id, user] as const] : [];
        }),
      ),
  };
}

function ownedBy<T>(owned: Owned<T> | undefined, teamId: string): T | null {
  return owned?.teamId === teamId ? owned.record : null;
}
