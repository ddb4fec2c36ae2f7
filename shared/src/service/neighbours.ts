// What a service's process builds to ask its neighbours, from its settings: the same
// clients, user directory and links in every server.ts.
import type { Db } from 'mongodb';
import { CasesService } from '../upstream/cases-service.ts';
import { ClientsService } from '../upstream/clients-service.ts';
import { ServiceClient } from '../upstream/service-client.ts';
import { UserDirectory } from '../upstream/user-directory.ts';
import { CaseLinks } from '../views/case-links.ts';
import { CASE_VIEWS, type CaseView } from '../views/case-view-entity.ts';
import { ClientLinks } from '../views/client-links.ts';
import { CLIENT_VIEWS, type ClientView } from '../views/client-view-entity.ts';
import { ViewsRepository } from '../views/views-repository.ts';
import type { ServiceName } from './names.ts';
import type { ServiceConfig } from './runner.ts';

type Settings = Pick<ServiceConfig, 'urls' | 'gatewayUrl' | 'internalToken'>;

/** A client of another service at its configured URL, presenting the internal credential. */
export function serviceClient(config: Settings, name: ServiceName, opts: { timeoutMs?: number } = {}): ServiceClient {
  return new ServiceClient({ name, baseUrl: config.urls[name], internalToken: config.internalToken, ...opts });
}

/** The gateway itself, for its /internal questions. */
export function gatewayClient(config: Settings): ServiceClient {
  return new ServiceClient({ name: 'gateway', baseUrl: config.gatewayUrl, internalToken: config.internalToken });
}

/** The teams' users, as the gateway answers them. */
export function userDirectory(config: Pick<Settings, 'gatewayUrl' | 'internalToken'>): UserDirectory {
  return new UserDirectory({ gatewayUrl: config.gatewayUrl, internalToken: config.internalToken });
}

/** Links to clients: checked with the clients service, shown from the view in `db`. */
export function clientLinksOf(config: Settings, db: Db): ClientLinks {
  return new ClientLinks(
    new ClientsService(serviceClient(config, 'clients')),
    new ViewsRepository<ClientView>(db, CLIENT_VIEWS),
  );
}

/** Links to cases: checked with the cases service, shown from the view in `db`. */
export function caseLinksOf(config: Settings, db: Db): CaseLinks {
  return new CaseLinks(new CasesService(serviceClient(config, 'cases')), new ViewsRepository<CaseView>(db, CASE_VIEWS));
}
