import { consumerTask, runService } from '@lpm/shared/service/runner';
import { ServiceClient } from '@lpm/shared/upstream/service-client';
import { UserDirectory } from '@lpm/shared/upstream/user-directory';
import { ClientViewEntity, DealEntity } from './data/deal-entity.ts';
import { DealsRepository } from './data/deals-repository.ts';
import { ClientViewsRepository } from './data/client-views-repository.ts';
import { Deals } from './domain/deals.ts';
import { ClientLinks } from './domain/client-links.ts';
import { consumeClientEvents } from './consumers/client-events.ts';
import { CasesService } from './upstream/cases-service.ts';
import { ClientsService } from './upstream/clients-service.ts';
import { buildDealsApp } from './app.ts';

await runService({
  name: 'deals',
  entities: [DealEntity, ClientViewEntity],
  outboxCollections: ['deals'],
  build: ({ config, logger, db, broker, relay }) => {
    const clients = new ClientsService(new ServiceClient({ name: 'clients', baseUrl: config.urls.clients, internalToken: config.internalToken }));
    const clientLinks = new ClientLinks(clients, new ClientViewsRepository(db));
    const deals = new Deals({
      deals: new DealsRepository(db, relay),
      clientLinks,
      users: new UserDirectory({ gatewayUrl: config.gatewayUrl, internalToken: config.internalToken }),
      cases: new CasesService({ baseUrl: config.urls.cases, internalToken: config.internalToken }),
    });
    return {
      app: buildDealsApp({ deals, db, internalToken: config.internalToken, loggerInstance: logger }),
      background: [consumerTask(() => consumeClientEvents(broker, clientLinks))],
    };
  },
});
