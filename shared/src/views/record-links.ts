// The client and responsible a record links to (cases, deals): checked at the
// moment of a write (404 with the spec's message when one is not the team's), and
// looked up, for many records at once, for the read shapes that nest them.
import { userNotFound } from '../errors.ts';
import { isId } from '../ids.ts';
import type { Caller } from '../upstream/service-client.ts';
import type { DirectoryUser } from '../upstream/user-directory.ts';
import type { ClientView } from './client-view-entity.ts';
import type { ClientLinks } from './client-links.ts';

/** A team's users, as the gateway's directory answers (the test helpers fake it). */
export interface UserLookup {
  find(teamId: string, ids: string[]): Promise<Map<string, DirectoryUser>>;
}

export interface LinkFields {
  client_id?: string | null;
  responsible_id?: string | null;
}

/** The linked clients and users of some records, by id. */
export interface Links {
  clients: Map<string, ClientView>;
  users: Map<string, DirectoryUser>;
}


export class RecordLinks {
  private readonly clients: ClientLinks;
  private readonly users: UserLookup;

  constructor(clients: ClientLinks, users: UserLookup) {
    this.clients = clients;
    this.users = users;
  }

  /** Checks the links a write sets: 404 `Client not found` / `User not found` when one is not the team's. */
  async check(who: Caller, body: LinkFields): Promise<void> {
    const checks: Promise<unknown>[] = [];
    if (typeof body.client_id === 'string') checks.push(this.clients.require(who, body.client_id));
    if (typeof body.responsible_id === 'string') {
      const id = body.responsible_id;
      if (!isId('user', id)) throw userNotFound();
      checks.push(
        this.users.find(who.teamId, [id]).then((found) => {
          if (!found.has(id)) throw userNotFound();
        }),
      );
    }
    await Promise.all(checks);
  }

  /** The clients and users `records` link to. */
  async of(teamId: string, records: LinkFields[]): Promise<Links> {
    const userIds = [...new Set(records.map((r) => r.responsible_id).filter((id): id is string => !!id))];
    const [clients, users] = await Promise.all([
      this.clients.find(teamId, records.map((r) => r.client_id ?? null)),
      userIds.length ? this.users.find(teamId, userIds) : new Map<string, DirectoryUser>(),
    ]);
    return { clients, users };
  }
}
