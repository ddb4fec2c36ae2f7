// The gateway's database: `<prefix>gateway` on the platform's MongoDB (or FerretDB),
// and the repositories over it.
import type { Db } from 'mongodb';
import type { Logger } from '@lpm/shared/logger';
import { openStore, startStore, type StartingStore, type Store } from '@lpm/shared/store/orm';
import { ApiKeysRepository } from './api-keys-repository.ts';
import { GATEWAY_ENTITIES } from './entities.ts';
import { PrincipalChangesRepository } from './principal-changes.ts';
import { TeamsRepository } from './teams-repository.ts';
import { UsersRepository } from './users-repository.ts';
import { CalendarSyncsRepository } from './calendar-syncs-repository.ts';
import { PortalSessionsRepository } from './portal-sessions-repository.ts';

/** Connects to the gateway's database and creates the indexes its entities declare. */
export function openGatewayStore(opts: { url: string; dbPrefix: string; logger?: Logger }): Promise<Store> {
  return openStore({
    url: opts.url,
    dbName: `${opts.dbPrefix}gateway`,
    entities: GATEWAY_ENTITIES,
    logger: opts.logger,
  });
}

/** The gateway's database for its server: answered at once, set up in the background once the store answers (startStore). */
export function startGatewayStore(opts: { url: string; dbPrefix: string; logger: Logger }): Promise<StartingStore> {
  return startStore({
    url: opts.url,
    dbName: `${opts.dbPrefix}gateway`,
    entities: GATEWAY_ENTITIES,
    logger: opts.logger,
  });
}

export interface GatewayRepositories {
  teams: TeamsRepository;
  users: UsersRepository;
  keys: ApiKeysRepository;
  changes: PrincipalChangesRepository;
  calendarSyncs: CalendarSyncsRepository;
  portalSessions: PortalSessionsRepository;
}

export function gatewayRepositories(db: Db): GatewayRepositories {
  const changes = new PrincipalChangesRepository(db);
  return {
    teams: new TeamsRepository(db, changes),
    users: new UsersRepository(db),
    keys: new ApiKeysRepository(db, changes),
    changes,
    calendarSyncs: new CalendarSyncsRepository(db),
    portalSessions: new PortalSessionsRepository(db, changes),
  };
}
