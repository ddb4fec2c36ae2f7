// The clients, cases and users a record links to: checked at the moment of a write
// (404 with the resource's message when one is not the team's), and looked up, for many
// records at once, for the read shapes that nest them. A check resolves with what
// it found, so the shape of the record it let through reads none of it back.
import { userNotFound } from '../errors.ts';
import { isId } from '../ids.ts';
import type { Caller } from '../upstream/service-client.ts';
import type { DirectoryUser } from '../upstream/user-directory.ts';
import type { CaseLinks } from './case-links.ts';
import type { CaseView } from './case-view-entity.ts';
import type { ClientLinks } from './client-links.ts';
import type { ClientView } from './client-view-entity.ts';

/** A team's users, as the gateway's directory answers (the test helpers fake it). */
export interface UserLookup {
  find(teamId: string, ids: string[]): Promise<Map<string, DirectoryUser>>;
}

/** The links of a record, or of a write's body; `responsible_id`: the user it links to. */
export interface LinkFields {
  client_id?: string | null;
  case_id?: string | null;
  responsible_id?: string | null;
}

/** A linked record in a read shape: `null` when none is linked, else its id and `fields` of its view (null when unknown). */
export function linkOf<V, const F extends keyof V & string>(
  id: string | null | undefined,
  views: ReadonlyMap<string, V>,
  fields: readonly F[],
): ({ id: string } & { [K in F]: NonNullable<V[K]> | null }) | null {
  if (!id) return null;
  const view = views.get(id);
  return { id, ...Object.fromEntries(fields.map((f) => [f, view?.[f] ?? null])) } as { id: string } & {
    [K in F]: NonNullable<V[K]> | null;
  };
}

/** The linked clients, cases and users of some records, by id. */
export interface Links {
  clients: Map<string, ClientView>;
  cases: Map<string, CaseView>;
  users: Map<string, DirectoryUser>;
}

interface RecordLinksDeps {
  clients: ClientLinks;
  /** For records that link to cases. */
  cases?: CaseLinks;
  /** For records that link to users. */
  users?: UserLookup;
}

const noLinks = (): Links => ({ clients: new Map(), cases: new Map(), users: new Map() });

/** The ids among `ids` that `known` does not hold. */
const unknown = (ids: (string | null | undefined)[], known: Map<string, unknown>) =>
  ids.filter((id): id is string => !!id && !known.has(id));

export class RecordLinks {
  private readonly deps: RecordLinksDeps;

  constructor(deps: RecordLinksDeps) {
    this.deps = deps;
  }

  /**
   * Checks the links a write sets: 404 `Client not found` / `Case not found` /
   * `User not found` when one is not the team's. Resolves with the client and case
   * views it stored and the users it found.
   */
  async check(who: Caller, body: LinkFields): Promise<Links> {
    const found = noLinks();
    const checks: Promise<unknown>[] = [];
    const { client_id, case_id, responsible_id } = body;
    // Before any question is asked: none is left running when this throws.
    if (typeof responsible_id === 'string' && !isId('user', responsible_id)) throw userNotFound();
    if (typeof client_id === 'string')
      checks.push(this.deps.clients.require(who, client_id).then((v) => found.clients.set(client_id, v)));
    if (typeof case_id === 'string')
      checks.push(
        this.casesOf()
          .require(who, case_id)
          .then((v) => found.cases.set(case_id, v)),
      );
    if (typeof responsible_id === 'string') {
      checks.push(
        this.usersOf()
          .find(who.teamId, [responsible_id])
          .then((users) => {
            const user = users.get(responsible_id);
            if (!user) throw userNotFound();
            found.users.set(responsible_id, user);
          }),
      );
    }
    await Promise.all(checks);
    return found;
  }

  /** The clients, cases and users `records` link to; those in `known` (what a check found) are not looked up again. */
  async of(teamId: string, records: LinkFields[], known: Links = noLinks()): Promise<Links> {
    const clientIds = unknown(
      records.map((r) => r.client_id),
      known.clients,
    );
    const caseIds = unknown(
      records.map((r) => r.case_id),
      known.cases,
    );
    const userIds = [
      ...new Set(
        unknown(
          records.map((r) => r.responsible_id),
          known.users,
        ),
      ),
    ];
    const [clients, cases, users] = await Promise.all([
      clientIds.length ? this.deps.clients.find(teamId, clientIds) : new Map<string, ClientView>(),
      caseIds.length ? this.casesOf().find(teamId, caseIds) : new Map<string, CaseView>(),
      userIds.length ? this.usersOf().find(teamId, userIds) : new Map<string, DirectoryUser>(),
    ]);
    return {
      clients: new Map([...known.clients, ...clients]),
      cases: new Map([...known.cases, ...cases]),
      users: new Map([...known.users, ...users]),
    };
  }

  private casesOf(): CaseLinks {
    if (!this.deps.cases) throw new Error('these records link to no case');
    return this.deps.cases;
  }

  private usersOf(): UserLookup {
    if (!this.deps.users) throw new Error('these records link to no user');
    return this.deps.users;
  }
}
