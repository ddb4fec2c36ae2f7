// The links to clients and cases a service under test resolves: through the
// lookups the test fakes, and the service's own copies (views) on its database.
import type { Db } from 'mongodb';
import type { Relay } from '@lpm/shared/store/record-store-types';
import type { CaseLookup } from '@lpm/shared/upstream/cases-service';
import { CaseLinks } from '@lpm/shared/views/case-links';
import { CASE_VIEWS, type CaseView } from '@lpm/shared/views/case-view-entity';
import { ClientLinks, type ClientLookup } from '@lpm/shared/views/client-links';
import { CLIENT_VIEWS, type ClientView } from '@lpm/shared/views/client-view-entity';
import type { UserLookup } from '@lpm/shared/views/record-links';
import { ViewsRepository } from '@lpm/shared/views/views-repository';

export const clientLinksOn = (db: Db, lookup: ClientLookup) =>
  new ClientLinks(lookup, new ViewsRepository<ClientView>(db, CLIENT_VIEWS));

export const caseLinksOn = (db: Db, lookup: CaseLookup) =>
  new CaseLinks(lookup, new ViewsRepository<CaseView>(db, CASE_VIEWS));

/** What the tests of a service whose records link to a client and a responsible user fake: those lookups, and its relay. */
export interface ClientAndUserNeighbours {
  clients?: ClientLookup;
  users?: UserLookup;
  relay?: Relay;
}

/** The service's client links and user lookup: no client (any client_id is 404) and no user unless given. */
export const clientAndUserLinksOn = (db: Db, n: ClientAndUserNeighbours) => ({
  clientLinks: clientLinksOn(db, n.clients ?? { facts: async () => null }),
  users: n.users ?? { find: async () => new Map() },
});
